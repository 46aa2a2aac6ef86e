// The SSE run of bench:stream: the same paced turns as the gRPC run, driven through the OpenAI
// Agents API front door as the SDK helpers drive it. Per turn, readied before the level's starts:
// a session made on the door (POST /v1/agents/sessions) and its event stream opened (GET …/events,
// live); then, at the turn's paced start, its input posted as a message (POST …/events, 202), and
// the stream read to the turn's end. A gRPC turn's start is its one StreamTurn request. Plain HTTP/1.1
// with a keep-alive agent, one connection per open stream, as the SDKs use it.
import http from "node:http";
import { performance } from "node:perf_hooks";
import { newTally, tallyDelta, type TurnRunner, type TurnTally } from "./paced.js";

interface Answer {
  status: number;
  body: string;
}

interface OpenStream {
  /** Settles when the turn ends (or the stream fails). */
  done: Promise<TurnTally>;
  /** When the input was posted: the first delta's wait is counted from here. */
  requested: number;
  keepLatency: boolean;
  fail(error: Error): void;
}

const DELTA = "agent.session.turn.output_text.delta";
const TURN_END = /^agent\.session\.turn\.(completed|failed|cancelled|incomplete)$/u;

export async function createSseRunner(port: number): Promise<{ run: TurnRunner; close(): void }> {
  const agent = new http.Agent({ keepAlive: true, maxSockets: Infinity });
  const request = (method: string, path: string, body?: unknown): Promise<Answer> =>
    new Promise((resolve, reject) => {
      const payload = body === undefined ? undefined : JSON.stringify(body);
      const req = http.request(
        {
          host: "127.0.0.1",
          port,
          method,
          path,
          agent,
          headers: {
            authorization: "Bearer bench",
            ...(payload !== undefined && { "content-type": "application/json" }),
          },
        },
        (res) => {
          let text = "";
          res.setEncoding("utf8");
          res.on("data", (chunk: string) => (text += chunk));
          res.on("end", () => resolve({ status: res.statusCode ?? 0, body: text }));
          res.on("error", reject);
        },
      );
      req.on("error", reject);
      req.end(payload);
    });
  const expectStatus = (answer: Answer, status: number, what: string) => {
    if (answer.status !== status) throw new Error(`${what}: ${answer.status} ${answer.body}`);
    return answer.body;
  };
  const agentId = (
    JSON.parse(
      expectStatus(
        await request("POST", "/v1/agents", { model: "bench", instructions: "Stream." }),
        200,
        "agent create",
      ),
    ) as { id: string }
  ).id;

  const run: TurnRunner = async () => {
    const created = await request("POST", "/v1/agents/sessions", {
      agent_id: agentId,
      environment: { type: "none" },
    });
    const sessionId = (JSON.parse(expectStatus(created, 200, "session create")) as { id: string })
      .id;
    const stream = await openStream(sessionId);
    return async (text, keepLatency) => {
      stream.keepLatency = keepLatency;
      // The stream is open (its headers came): the input goes in now, as the SDK helpers post it.
      stream.requested = performance.now();
      const message = {
        events: [
          {
            type: "agent.session.input.message",
            input: [{ role: "user", content: [{ type: "input_text", text }] }],
          },
        ],
      };
      const answer = await request("POST", `/v1/agents/sessions/${sessionId}/events`, message);
      if (answer.status !== 202) stream.fail(new Error(`message: ${answer.status}`));
      const tally = await stream.done;
      if (!tally.completed) throw new Error(`${sessionId}: the turn did not finish`);
      return tally;
    };
  };

  /** The session's event stream, open (headers received), tallying deltas until a turn ends. */
  const openStream = (sessionId: string) =>
    new Promise<OpenStream>((opened, refused) => {
      const tally = newTally();
      let settle: { resolve: (t: TurnTally) => void; reject: (e: Error) => void } | undefined;
      const done = new Promise<TurnTally>((resolve, reject) => (settle = { resolve, reject }));
      // Not awaited until the turn starts: a failure before that must not go unhandled.
      done.catch(() => undefined);
      const req = http.request(
        {
          host: "127.0.0.1",
          port,
          path: `/v1/agents/sessions/${sessionId}/events`,
          agent,
          headers: { authorization: "Bearer bench", accept: "text/event-stream" },
        },
        (res) => {
          if (res.statusCode !== 200) {
            refused(new Error(`events: ${res.statusCode}`));
            req.destroy();
            return;
          }
          let buffer = "";
          const finish = (error?: Error) => {
            res.removeAllListeners("data");
            req.destroy();
            if (error) settle?.reject(error);
            else settle?.resolve(tally);
          };
          const stream: OpenStream = { done, requested: 0, keepLatency: false, fail: finish };
          res.setEncoding("utf8");
          res.on("data", (chunk: string) => {
            buffer += chunk;
            for (let end = buffer.indexOf("\n\n"); end >= 0; end = buffer.indexOf("\n\n")) {
              const block = buffer.slice(0, end);
              buffer = buffer.slice(end + 2);
              if (!block.startsWith("event: ")) continue;
              const type = block.slice(7, block.indexOf("\n"));
              if (type === DELTA) {
                const data = JSON.parse(block.slice(block.indexOf("\ndata: ") + 7)) as {
                  delta: string;
                };
                tallyDelta(tally, data.delta, stream.requested, stream.keepLatency);
              } else if (TURN_END.test(type)) {
                tally.completed = type === "agent.session.turn.completed";
                finish();
                return;
              }
            }
          });
          res.on("end", () => finish(new Error(`${sessionId}: the stream ended early`)));
          res.on("error", (error) => finish(error));
          opened(stream);
        },
      );
      req.on("error", refused);
      req.end();
    });

  return { run, close: () => agent.destroy() };
}
