// Health of the configured MCP servers: `tether.mcp.<name>` is SERVING while the replica is
// connected to that server and NOT_SERVING otherwise. The server as a whole ("") and
// tether.liveness do not follow them: a turn runs without the tools of a server that is down.
import { MCP_HEALTH_PREFIX, ServingStatus, type HealthState } from "../api/health-service.js";
import type { McpHub } from "../mcp/hub.js";

export function watchMcpHealth(hub: McpHub, health: HealthState): void {
  const apply = (): void => {
    for (const { name, state } of hub.states()) {
      const status = state === "connected" ? ServingStatus.SERVING : ServingStatus.NOT_SERVING;
      health.set(`${MCP_HEALTH_PREFIX}${name}`, status);
    }
  };
  apply();
  hub.onChange(apply);
}
