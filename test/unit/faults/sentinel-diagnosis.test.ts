// A Sentinel left with no promotable replica is diagnosed in Sentinel's own terms (sentinel.c's
// selection rules applied to its SENTINEL REPLICAS view), a finding about the environment.
import { describe, expect, it } from "vitest";
import {
  countNoGoodSlave,
  describeDiagnosis,
  diagnoseUnpromotable,
  exclusions,
  fieldsOf,
} from "../../faults/sentinel-diagnosis.js";

const reply = (fields: Record<string, string>): string[] => Object.entries(fields).flat();

const healthy = {
  name: "127.0.0.1:7001",
  ip: "127.0.0.1",
  port: "7001",
  flags: "slave",
  "last-ok-ping-reply": "120",
  "info-refresh": "400",
  "master-link-down-time": "3000",
  "slave-priority": "100",
};

describe("Sentinel diagnosis", () => {
  it("reads SENTINEL's flat field/value replies as records", () => {
    expect(fieldsOf(["flags", "slave", "port", "7001"])).toEqual({ flags: "slave", port: "7001" });
    expect(fieldsOf("not an array")).toEqual({});
  });

  it("a replica in sync and answering is not excluded", () => {
    expect(exclusions(healthy, 500, 4_000)).toEqual([]);
  });

  it("names each rule a replica fails", () => {
    const starved = {
      ...healthy,
      flags: "slave,s_down,disconnected",
      "last-ok-ping-reply": "7200",
      "info-refresh": "9100",
      "master-link-down-time": "30000",
      "slave-priority": "0",
    };
    // The primary down 12 s: the link may be down 12 s + 10 x 500 ms = 17 s.
    expect(exclusions(starved, 500, 12_000)).toEqual([
      "flagged s_down",
      "flagged disconnected",
      "last PING answer 7200 ms ago (> 5000)",
      "INFO 9100 ms old (> 5000)",
      "link to the primary down 30000 ms (> 17000 allowed)",
      "priority 0",
    ]);
  });

  it("a topology with no promotable replica is diagnosed with the Sentinel's view and the aborts in its logs", () => {
    const logs = [
      "1:X 06 Dec 2026 19:01:02.000 # +sdown master tether-primary 127.0.0.1 7000",
      "1:X 06 Dec 2026 19:01:03.000 # -failover-abort-no-good-slave master tether-primary 127.0.0.1 7000",
      "1:X 06 Dec 2026 19:01:13.000 # -failover-abort-no-good-slave master tether-primary 127.0.0.1 7000",
    ].join("\n");
    expect(countNoGoodSlave(logs)).toBe(2);
    const diagnosis = diagnoseUnpromotable({
      primary: fieldsOf(
        reply({
          ip: "127.0.0.1",
          port: "7000",
          flags: "master,s_down,o_down",
          "s-down-time": "41000",
        }),
      ),
      replicas: [
        fieldsOf(reply({ ...healthy, "slave-priority": "0" })),
        fieldsOf(reply({ ...healthy, port: "7002", flags: "slave,s_down" })),
      ],
      logs,
      downAfterMs: 500,
      healedBy: "the harness promoting 127.0.0.1:7001 (largest offset) by hand",
    });
    expect(diagnosis).toEqual({
      kind: "no_promotable_replica",
      no_good_slave_aborts: 2,
      primary: { address: "127.0.0.1:7000", flags: "master,s_down,o_down", s_down_ms: 41_000 },
      replicas: [
        { address: "127.0.0.1:7001", flags: "slave", excluded_because: ["priority 0"] },
        { address: "127.0.0.1:7002", flags: "slave,s_down", excluded_because: ["flagged s_down"] },
      ],
      healed_by: "the harness promoting 127.0.0.1:7001 (largest offset) by hand",
    });
    expect(describeDiagnosis(diagnosis)).toBe(
      "no promotable replica (2 no-good-slave aborts; primary 127.0.0.1:7000 [master,s_down,o_down]): " +
        "127.0.0.1:7001 [slave] priority 0 | 127.0.0.1:7002 [slave,s_down] flagged s_down; " +
        "healed by the harness promoting 127.0.0.1:7001 (largest offset) by hand",
    );
  });
});
