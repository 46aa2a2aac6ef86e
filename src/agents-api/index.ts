// The OpenAI Agents API front door (ADR 0037): what the composition root (src/server) uses.
export { createFrontDoor, type FrontDoor, type FrontDoorOptions } from "./front-door.js";
export { createSessionEventSource, type SessionEventSource } from "./session-events-route.js";
