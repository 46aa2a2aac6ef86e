// The page size of every List RPC: the default and the maximum each request message promises in
// proto/tether/v1 (written here as literals, read from those comments), and the refusal past it.
import { describe, expect, test } from "vitest";
import { PAGE_SIZES, pageSizeOf, type ListRpc } from "../../../src/api/page-size.js";
import { file_tether_v1_agent_service } from "../../../src/gen/tether/v1/agent_service_pb.js";
import { file_tether_v1_lease_service } from "../../../src/gen/tether/v1/lease_service_pb.js";
import { file_tether_v1_queue_service } from "../../../src/gen/tether/v1/queue_service_pb.js";
import { file_tether_v1_quota_service } from "../../../src/gen/tether/v1/quota_service_pb.js";
import { file_tether_v1_schedule_service } from "../../../src/gen/tether/v1/schedule_service_pb.js";
import { file_tether_v1_session_service } from "../../../src/gen/tether/v1/session_service_pb.js";
import { file_tether_v1_turn_service } from "../../../src/gen/tether/v1/turn_service_pb.js";
import { file_tether_v1_webhook_service } from "../../../src/gen/tether/v1/webhook_service_pb.js";
import { expectRefusal } from "./convert/support.js";

/** RPC → [what 0 means, the largest size asked], as the proto comments say. */
const PROMISED: Record<ListRpc, [number, number]> = {
  ListSessions: [100, 1000],
  ListMessages: [100, 1000],
  ListAgents: [100, 1000],
  ListWork: [100, 1000],
  ListInputs: [100, 1000],
  ListWebhookDeliveries: [100, 1000],
  ListSchedules: [50, 100],
  ListScheduleRuns: [100, 100],
};

describe("page sizes", () => {
  test("every RPC whose request has a page_size has a row, and no other RPC does", () => {
    const files = [
      file_tether_v1_agent_service,
      file_tether_v1_lease_service,
      file_tether_v1_queue_service,
      file_tether_v1_quota_service,
      file_tether_v1_schedule_service,
      file_tether_v1_session_service,
      file_tether_v1_turn_service,
      file_tether_v1_webhook_service,
    ];
    const paged = files
      .flatMap((file) => file.services.flatMap((service) => service.methods))
      .filter((method) => method.input.fields.some((field) => field.name === "page_size"))
      .map((method) => method.name)
      .sort();
    expect(Object.keys(PAGE_SIZES).sort()).toEqual(paged);
  });

  test.each(Object.entries(PROMISED))(
    "%s: 0 is the default, the maximum is allowed",
    (rpc, [fallback, max]) => {
      expect(pageSizeOf(rpc as ListRpc, 0)).toBe(fallback);
      expect(pageSizeOf(rpc as ListRpc, 1)).toBe(1);
      expect(pageSizeOf(rpc as ListRpc, max)).toBe(max);
    },
  );

  test.each(Object.entries(PROMISED))(
    "%s: one past the maximum is refused naming page_size",
    (rpc, [, max]) => {
      const refusal = expectRefusal(() => pageSizeOf(rpc as ListRpc, max + 1), "page_size");
      expect(refusal.message).toContain(`must be at most ${max}`);
    },
  );
});
