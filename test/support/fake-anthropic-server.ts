// A fake Anthropic Messages server with a context window, for compaction tests: it counts the
// prompt with the fake OpenAI server's tokenizer (about 3.1 characters a token, not Tether's
// four-characters estimate), refuses a prompt over the window with the real API's status and
// body, and streams answers with realistic usage (input_tokens in message_start, output_tokens
// in message_delta). It serves the compaction beta as the SDK types it: a request with
// `compaction: {type: "summarize"}` gets one signed `compaction` block; a later request may send
// it back first in `messages`, where this server checks its signature (bound to content and
// model), its place and the beta header, with the real error bodies. Every request is recorded
// (headers and body) so tests can check what went over the wire.
import { createHash } from "node:crypto";
import { createServer, type IncomingHttpHeaders, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { countText } from "./fake-openai-server.js";

export interface FakeAnthropicOptions {
  /** The model's context window in this server's tokens; a larger prompt gets HTTP 400. */
  contextLimit: number;
  /** Characters of each ordinary answer. */
  answerChars: number;
  /** Characters of each summary, Tether's or a compaction block's (capped by max_tokens). */
  summaryChars?: number;
  /** Refuse compaction requests as an account without the beta is refused (HTTP 400). */
  refuseCompactions?: boolean;
}

export interface FakeAnthropicStats {
  calls: number;
  /** Compaction requests answered with a block. */
  compactions: number;
  /** Tether's own summary calls (mode summarize), recognised by their system prompt. */
  summaryCalls: number;
  maxPromptTokens: number;
  /** Prompts refused for exceeding the window. */
  refused: number;
  /** Requests refused for another reason (error_code or message). */
  errors: string[];
}

export interface RecordedRequest {
  headers: IncomingHttpHeaders;
  body: AnthropicRequest;
}

export interface FakeAnthropicServer {
  baseURL: string;
  stats: FakeAnthropicStats;
  requests: RecordedRequest[];
  close(): Promise<void>;
}

interface Block {
  type: string;
  text?: string;
  content?: unknown;
  input?: unknown;
  signature?: string | null;
  encrypted_content?: string | null;
}

interface AnthropicMessage {
  role: string;
  content: string | Block[];
}

export interface AnthropicRequest {
  model: string;
  max_tokens: number;
  messages: AnthropicMessage[];
  system?: string;
  tools?: unknown[];
  stream?: boolean;
  compaction?: { type: string; instructions?: string };
  context_management?: unknown;
}

const SUMMARIZER_PROMPT = "You write summaries of conversations.";
export const COMPACTION_BETA = "compact-2026-09-04";

/** What this server signs a compaction block with: its content and the model that made it. */
export const signatureOf = (content: string, model: string): string =>
  createHash("sha256").update(`${model}\n${content}`).digest("base64url");

const blocksOf = (m: AnthropicMessage): Block[] =>
  typeof m.content === "string" ? [{ type: "text", text: m.content }] : m.content;

function blockText(b: Block): string {
  if (b.type === "text") return b.text ?? "";
  if (b.type === "tool_use") return JSON.stringify(b.input ?? {});
  if (b.type === "compaction") return typeof b.content === "string" ? b.content : "";
  if (b.type === "tool_result") {
    return typeof b.content === "string" ? b.content : JSON.stringify(b.content ?? "");
  }
  return "";
}

export function countPrompt(body: AnthropicRequest): number {
  let tokens = countText(body.system ?? "");
  if (body.tools !== undefined) tokens += countText(JSON.stringify(body.tools));
  for (const m of body.messages) {
    tokens += 4;
    for (const b of blocksOf(m)) tokens += countText(blockText(b));
  }
  return tokens;
}

type Refusal = { status: number; type: string; message: string; code?: string };

/** The checks the real API makes of compaction blocks and requests (error_code as it names them). */
function checkCompaction(
  body: AnthropicRequest,
  headers: IncomingHttpHeaders,
): Refusal | undefined {
  const beta = String(headers["anthropic-beta"] ?? "")
    .split(",")
    .map((s) => s.trim());
  const blocks = body.messages.flatMap((m, i) => blocksOf(m).map((b, j) => ({ b, i, j })));
  const compactions = blocks.filter(({ b }) => b.type === "compaction");
  const bad = (message: string, code?: string): Refusal => ({
    status: 400,
    type: "invalid_request_error",
    message,
    ...(code && { code }),
  });
  if (
    (body.compaction !== undefined || compactions.length > 0) &&
    !beta.includes(COMPACTION_BETA)
  ) {
    return bad(
      body.compaction !== undefined
        ? "compaction: Extra inputs are not permitted"
        : "messages.0.content.0.type: Input tag 'compaction' found using 'type' does not match any of the expected tags",
    );
  }
  if (body.compaction !== undefined && body.context_management !== undefined) {
    return bad("`compaction` cannot be combined with `context_management`");
  }
  if (compactions.length > 1) {
    return bad("messages holds more than one compaction block", "compaction_block_ambiguous");
  }
  const first = compactions[0];
  if (first !== undefined) {
    if (first.i !== 0 || first.j !== 0) {
      return bad("the compaction block must be the first block", "compaction_block_misplaced");
    }
    const content = typeof first.b.content === "string" ? first.b.content : "";
    if (first.b.signature !== signatureOf(content, body.model)) {
      return bad(
        "the compaction block's signature does not verify",
        "compaction_signature_invalid",
      );
    }
  }
  if (body.compaction !== undefined) {
    const last = body.messages.at(-1);
    if (last?.role === "assistant" && blocksOf(last).some((b) => b.type === "tool_use")) {
      return bad(
        "the conversation ends on an unfinished assistant turn",
        "compaction_incomplete_turn",
      );
    }
  }
  return undefined;
}

export async function startFakeAnthropic(
  options: FakeAnthropicOptions,
): Promise<FakeAnthropicServer> {
  const stats: FakeAnthropicStats = {
    calls: 0,
    compactions: 0,
    summaryCalls: 0,
    maxPromptTokens: 0,
    refused: 0,
    errors: [],
  };
  const requests: RecordedRequest[] = [];
  let answers = 0;
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      const body = JSON.parse(Buffer.concat(chunks).toString("utf8")) as AnthropicRequest;
      requests.push({ headers: req.headers, body });
      stats.calls++;
      const prompt = countPrompt(body);
      const refusal =
        options.refuseCompactions === true && body.compaction !== undefined
          ? {
              status: 400,
              type: "invalid_request_error",
              message: "compaction is not available for this model",
            }
          : checkCompaction(body, req.headers);
      if (refusal !== undefined) {
        stats.errors.push(refusal.code ?? refusal.message);
        error(res, refusal);
        return;
      }
      if (prompt > options.contextLimit) {
        stats.refused++;
        error(res, {
          status: 400,
          type: "invalid_request_error",
          message: `prompt is too long: ${prompt} tokens > ${options.contextLimit} maximum`,
        });
        return;
      }
      stats.maxPromptTokens = Math.max(stats.maxPromptTokens, prompt);
      const summaryChars = Math.min(options.summaryChars ?? 1200, body.max_tokens * 3);
      if (body.compaction !== undefined) {
        stats.compactions++;
        const content = summaryOf(body, summaryChars, "Compacted");
        json(res, 200, {
          id: `msg_compact_${stats.compactions}`,
          type: "message",
          role: "assistant",
          model: body.model,
          content: [
            {
              type: "compaction",
              content,
              encrypted_content: `enc-${stats.compactions}`,
              signature: signatureOf(content, body.model),
            },
          ],
          stop_reason: "compaction",
          stop_sequence: null,
          usage: usage(prompt, countText(content)),
        });
        return;
      }
      let text: string;
      if (body.system === SUMMARIZER_PROMPT) {
        stats.summaryCalls++;
        text = summaryOf(body, summaryChars, "Summary");
      } else {
        answers++;
        text = `Answer ${answers}. `.padEnd(options.answerChars, "Lorem ipsum dolor sit amet. ");
      }
      stream(res, body.model, text, prompt, countText(text));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    baseURL: `http://127.0.0.1:${port}`,
    stats,
    requests,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** A summary naming the answers it saw, so tests can follow what it covered. */
function summaryOf(body: AnthropicRequest, chars: number, what: string): string {
  const text = body.messages.flatMap(blocksOf).map(blockText).join("\n");
  const seen = text.match(/Answer \d+/gu) ?? [];
  const covered = seen.length === 0 ? "nothing numbered" : `${seen[0]} to ${seen.at(-1)}`;
  return `${what} covering ${covered}. `
    .padEnd(chars, "Facts kept. ")
    .slice(0, Math.max(chars, 40));
}

const usage = (input: number, output: number) => ({
  input_tokens: input,
  output_tokens: output,
  cache_creation_input_tokens: 0,
  cache_read_input_tokens: 0,
});

function error(res: ServerResponse, r: Refusal): void {
  json(res, r.status, {
    type: "error",
    error: {
      type: r.type,
      message: r.message,
      ...(r.code && { details: { error_code: r.code } }),
    },
    request_id: "req_fake",
  });
}

function json(res: ServerResponse, status: number, value: unknown): void {
  res.writeHead(status, { "content-type": "application/json", "request-id": "req_fake" });
  res.end(JSON.stringify(value));
}

function stream(
  res: ServerResponse,
  model: string,
  text: string,
  prompt: number,
  completion: number,
): void {
  res.writeHead(200, { "content-type": "text/event-stream", "cache-control": "no-cache" });
  const frame = (event: string, value: unknown): string =>
    `event: ${event}\ndata: ${JSON.stringify({ type: event, ...(value as object) })}\n\n`;
  let out = frame("message_start", {
    message: {
      id: "msg_fake",
      type: "message",
      role: "assistant",
      model,
      content: [],
      stop_reason: null,
      stop_sequence: null,
      usage: usage(prompt, 1),
    },
  });
  out += frame("content_block_start", { index: 0, content_block: { type: "text", text: "" } });
  for (let i = 0; i < text.length; i += 1024) {
    out += frame("content_block_delta", {
      index: 0,
      delta: { type: "text_delta", text: text.slice(i, i + 1024) },
    });
  }
  out += frame("content_block_stop", { index: 0 });
  out += frame("message_delta", {
    delta: { stop_reason: "end_turn", stop_sequence: null },
    usage: { output_tokens: completion },
  });
  out += frame("message_stop", {});
  res.end(out);
}
