// The session room: who drives a session on this replica. The driver's loop, the lease keeper,
// the sweep, completion recovery, and the refusals of a busy, parked or draining session. It may
// import the turn and stream rooms.
export { createSessionDriver, type DriveOutcome, type SessionDriver } from "./session-driver.js";
export { startsInOneStep, submitOrStart, type StartedTurn, type Submitted } from "./turn-start.js";
export { sessionBusy, sessionParked, shuttingDown } from "./refusals.js";
