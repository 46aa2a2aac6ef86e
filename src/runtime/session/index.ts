// The session room: who drives a session on this replica. The driver's loop, one hold of a lease
// (its turns one after another, ended by a HoldEnd), the lease keeper and the lease claims,
// completion recovery, and the refusals of a busy or parked session and of a closing replica. It
// may import the turn, stream and limits rooms.
export { createSessionDriver, type DriveOutcome, type SessionDriver } from "./session-driver.js";
export { startsInOneStep, submitOrStart, type StartedTurn, type Submitted } from "./turn-start.js";
export { replicaClosing, sessionBusy, sessionParked } from "./refusals.js";
export type { HoldEnd } from "./hold-end.js";
