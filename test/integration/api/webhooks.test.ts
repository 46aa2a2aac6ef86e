// WebhookService through the real server: endpoints are created with a server-generated whsec_
// secret shown once, read back without it, updated, deleted; bad input is INVALID_ARGUMENT naming
// the field; unknown endpoints are NOT_FOUND.
import { Code, createClient, type Client } from "@connectrpc/connect";
import { afterEach, describe, expect, it } from "vitest";
import { routeWebhookService } from "../../../src/api/routes.js";
import { WebhookService } from "../../../src/gen/tether/v1/webhook_service_pb.js";
import { createMemoryStore } from "../../../src/store/memory/memory-store.js";
import { expectCode } from "../../support/api-clients.js";
import { startApiServer, type ApiServerHarness } from "../../support/api-server.js";

describe("WebhookService", () => {
  let server: ApiServerHarness | undefined;
  afterEach(async () => {
    await server?.close();
    server = undefined;
  });
  async function client(): Promise<Client<typeof WebhookService>> {
    const store = createMemoryStore();
    server = await startApiServer({
      store,
      routes: (router) => routeWebhookService(router, store.webhooks),
    });
    return createClient(WebhookService, server.transport);
  }

  it("creates an endpoint with a generated secret shown once, then reads, updates and deletes it", async () => {
    const api = await client();
    const created = await api.createWebhookEndpoint({
      endpointId: "ops",
      url: "https://hooks.example.com/tether",
      eventTypes: ["turn.completed", "session.action_required"],
    });
    expect(created.endpoint?.secret).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/u);
    const got = await api.getWebhookEndpoint({ endpointId: "ops" });
    expect(got.endpoint).toMatchObject({
      endpointId: "ops",
      url: "https://hooks.example.com/tether",
      eventTypes: ["turn.completed", "session.action_required"],
      secret: "",
      disabled: false,
    });
    const updated = await api.updateWebhookEndpoint({
      endpointId: "ops",
      updateEventTypes: true,
      eventTypes: [],
      disabled: true,
    });
    expect(updated.endpoint).toMatchObject({
      eventTypes: [],
      disabled: true,
      disabledReason: "disabled by request",
    });
    expect((await api.listWebhookEndpoints({})).endpoints.map((e) => e.endpointId)).toEqual([
      "ops",
    ]);
    await expectCode(
      api.createWebhookEndpoint({ endpointId: "ops", url: "https://x.example.com/" }),
      Code.AlreadyExists,
    );
    await api.deleteWebhookEndpoint({ endpointId: "ops" });
    await expectCode(api.getWebhookEndpoint({ endpointId: "ops" }), Code.NotFound);
    await expectCode(api.deleteWebhookEndpoint({ endpointId: "ops" }), Code.NotFound);
  });

  it("refuses a non-http URL, an unknown event type and a malformed secret, naming the field", async () => {
    const api = await client();
    const url = await expectCode(
      api.createWebhookEndpoint({ endpointId: "a", url: "ftp://hooks.example.com/" }),
      Code.InvalidArgument,
    );
    expect(url.message).toContain("url");
    const type = await expectCode(
      api.createWebhookEndpoint({
        endpointId: "a",
        url: "https://hooks.example.com/",
        eventTypes: ["turn.exploded"],
      }),
      Code.InvalidArgument,
    );
    expect(type.message).toContain("event_types");
    const secret = await expectCode(
      api.createWebhookEndpoint({
        endpointId: "a",
        url: "https://hooks.example.com/",
        secret: "not-a-secret",
      }),
      Code.InvalidArgument,
    );
    expect(secret.message).toContain("secret");
    const given = await api.createWebhookEndpoint({
      endpointId: "b",
      url: "https://hooks.example.com/",
      secret: "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw",
    });
    expect(given.endpoint?.secret).toBe("whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw");
    await expectCode(
      api.replayWebhookDelivery({ endpointId: "b", deliveryId: "nope" }),
      Code.InvalidArgument,
    );
    await expectCode(api.listWebhookDeliveries({ endpointId: "zzz" }), Code.NotFound);
  });
});
