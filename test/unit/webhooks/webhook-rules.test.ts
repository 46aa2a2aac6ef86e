// The rules a webhook delivery follows that need no server: which addresses are private, how long
// a retry waits, what an endpoint URL and secret may be, and the body that is signed.
import { describe, expect, test } from "vitest";
import { isTetherError } from "../../../src/domain/errors.js";
import {
  parseWebhookSecret,
  parseWebhookUrl,
  webhookBackoffMs,
} from "../../../src/domain/webhooks.js";
import {
  createWebhookSender,
  isPrivateAddress,
  webhookBody,
} from "../../../src/webhooks/webhook-sender.js";

describe("webhook rules", () => {
  test("loopback, private, link-local, shared and unspecified addresses are private; public ones are not", () => {
    for (const address of [
      "127.0.0.1",
      "10.1.2.3",
      "172.16.0.1",
      "172.31.255.255",
      "192.168.1.1",
      "169.254.169.254",
      "100.64.0.1",
      "0.0.0.0",
      "::1",
      "::",
      "fd00::1",
      "fe80::1",
      "::ffff:127.0.0.1",
      "::ffff:10.0.0.1",
    ]) {
      expect(isPrivateAddress(address), address).toBe(true);
    }
    for (const address of ["93.184.216.34", "172.32.0.1", "8.8.8.8", "2606:4700::1111"]) {
      expect(isPrivateAddress(address), address).toBe(false);
    }
  });

  test.each([
    ["::7f00:1", "IPv4-compatible 127.0.0.1 (::/96)"],
    ["::a00:1", "IPv4-compatible 10.0.0.1 (::/96)"],
    ["::8.8.8.8", "IPv4-compatible, even of a public address (::/96)"],
    ["::ffff:7f00:1", "IPv4-mapped 127.0.0.1 in hex, as a URL writes it (::ffff:0:0/96)"],
    ["::ffff:8.8.8.8", "IPv4-mapped, even of a public address (::ffff:0:0/96)"],
    ["64:ff9b::7f00:1", "NAT64 of 127.0.0.1 (64:ff9b::/96)"],
    ["64:ff9b::808:808", "NAT64 of a public address (64:ff9b::/96)"],
    ["64:ff9b:1::a00:1", "local-use NAT64 (64:ff9b:1::/48)"],
    ["2002:7f00:1::1", "6to4 of 127.0.0.1 (2002::/16)"],
    ["2002:808:808::1", "6to4 of a public address (2002::/16)"],
  ])("an IPv6 address embedding an IPv4 one is refused: %s (%s)", (address) => {
    expect(isPrivateAddress(address)).toBe(true);
  });

  test.each([
    "2606:4700::1111",
    "2001:4860:4860::8888",
    "2a00:1450:4001:82b::200e",
    "2003::1",
    "64:ff9c::1",
    "::1:0:0:1",
  ])("a public IPv6 address stays allowed: %s", (address) => {
    expect(isPrivateAddress(address)).toBe(false);
  });

  test("a name that does not resolve and an address that is refused fail with the same refusal", async () => {
    const send = createWebhookSender({ allowPrivate: false, timeoutMs: 2_000 });
    const event = { id: "msg_1", type: "turn.completed" as const, createdAtMs: 0, data: {} };
    const reports = [];
    for (const url of [
      "http://tether-no-such-host.invalid/hook",
      "http://127.0.0.1:9/hook",
      "http://[::7f00:1]:9/hook",
      "http://localhost:9/hook",
    ]) {
      const endpoint = {
        tenant: "t",
        endpointId: "e",
        url,
        eventTypes: [],
        secret: "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw",
        disabled: false,
        disabledReason: "",
        consecutiveFailures: 0,
        createdAtMs: 0,
      };
      reports.push(await send(endpoint, event));
    }
    for (const report of reports) {
      expect(report).toEqual({
        ok: false,
        status: 0,
        error: "refused: the host is not a reachable public address",
      });
    }
  });

  test("backoff grows from half a second to a one hour ceiling, jittered within its upper half", () => {
    expect(webhookBackoffMs(1, 0)).toBe(500);
    expect(webhookBackoffMs(1, 0.999)).toBe(999);
    expect(webhookBackoffMs(4, 0)).toBe(4_000);
    expect(webhookBackoffMs(30, 0)).toBe(1_800_000);
    expect(webhookBackoffMs(30, 0.999)).toBeLessThan(3_600_000);
  });

  test("an endpoint URL is http or https without credentials; a secret is whsec_ and a base64 key", () => {
    expect(parseWebhookUrl("https://hooks.example.com/a?b=1")).toBe(
      "https://hooks.example.com/a?b=1",
    );
    for (const bad of ["ftp://x.example.com/", "not a url", "https://user:pw@x.example.com/"]) {
      let caught: unknown;
      try {
        parseWebhookUrl(bad);
      } catch (error) {
        caught = error;
      }
      expect(isTetherError(caught, "invalid_argument"), bad).toBe(true);
    }
    expect(parseWebhookSecret("whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw")).toBe(
      "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw",
    );
    expect(() => parseWebhookSecret("whsec_c2hvcnQ=")).toThrow(/whsec_/u);
  });

  test("the body is the thin event with an RFC 3339 created_at (signatures: the integration tests verify them)", () => {
    const body = webhookBody({
      id: "msg_1",
      type: "turn.completed",
      createdAtMs: Date.UTC(2026, 0, 2, 3, 4, 5),
      data: { session_id: "s1", turn_id: "t1" },
    });
    expect(JSON.parse(body)).toEqual({
      id: "msg_1",
      type: "turn.completed",
      created_at: "2026-01-02T03:04:05.000Z",
      data: { session_id: "s1", turn_id: "t1" },
    });
  });
});
