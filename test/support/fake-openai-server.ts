// A fake OpenAI-compatible chat completions server with a context window: it counts the prompt
// with its own tokenizer (not Tether's four-characters estimate), refuses a prompt over the
// window with the status and body the real API sends, and otherwise streams an answer with
// realistic usage (prompt_tokens, completion_tokens in the final chunk). Summary requests (the
// compaction's, recognised by their system message) get a short summary of what they were sent.
import { createServer, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";

export interface FakeOpenAIOptions {
  /** The model's context window in this server's tokens; a larger prompt gets HTTP 400. */
  contextLimit: number;
  /** Characters of each ordinary answer. */
  answerChars: number;
  /** Characters of each summary (capped by the request's max tokens). */
  summaryChars?: number;
}

export interface FakeOpenAIStats {
  calls: number;
  summaryCalls: number;
  /** Prompt and completion tokens of summary calls. */
  summaryTokens: number;
  /** The largest prompt accepted, in this server's tokens. */
  maxPromptTokens: number;
  /** Prompts refused for exceeding the window. */
  refused: number;
}

export interface FakeOpenAIServer {
  baseURL: string;
  stats: FakeOpenAIStats;
  /** Fails the next `n` summary calls with HTTP 500 (a provider outage during compaction). */
  failSummaries(n: number): void;
  /**
   * Holds the next summary call unanswered (its connection open, as a slow model would) and
   * resolves once it has arrived: a probe kills the caller meanwhile. Later calls are answered.
   */
  holdNextSummary(): Promise<void>;
  close(): Promise<void>;
}

interface ChatMessage {
  role: string;
  content?: string | null | { type: string; text?: string }[];
  tool_calls?: unknown[];
}

interface ChatRequest {
  model?: string;
  messages: ChatMessage[];
  tools?: unknown[];
  max_tokens?: number;
  max_completion_tokens?: number;
}

const SUMMARIZER_PROMPT = "You write summaries of conversations.";

/**
 * This server's tokenizer: a word of up to four letters, a run of up to three digits, or one other
 * non-space character is a token, plus four per message. It counts English a little above
 * four characters a token, as the real tokenizers do for prose with punctuation.
 */
export function countTokens(
  messages: readonly ChatMessage[],
  tools: readonly unknown[] = [],
): number {
  let tokens = tools.length === 0 ? 0 : countText(JSON.stringify(tools));
  for (const m of messages) {
    tokens += 4;
    const c = m.content;
    if (typeof c === "string") tokens += countText(c);
    else if (Array.isArray(c)) for (const part of c) tokens += countText(part.text ?? "");
    if (m.tool_calls !== undefined) tokens += countText(JSON.stringify(m.tool_calls));
  }
  return tokens;
}

export function countText(text: string): number {
  return (text.match(/[A-Za-z]{1,4}|\d{1,3}|[^\sA-Za-z\d]/gu) ?? []).length;
}

export async function startFakeOpenAI(options: FakeOpenAIOptions): Promise<FakeOpenAIServer> {
  const stats: FakeOpenAIStats = {
    calls: 0,
    summaryCalls: 0,
    summaryTokens: 0,
    maxPromptTokens: 0,
    refused: 0,
  };
  let failing = 0;
  let hold: (() => void) | undefined;
  let answers = 0;
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      const body = JSON.parse(Buffer.concat(chunks).toString("utf8")) as ChatRequest;
      stats.calls++;
      const prompt = countTokens(body.messages, body.tools);
      const summary = body.messages[0]?.content === SUMMARIZER_PROMPT;
      if (summary && hold !== undefined) {
        const arrived = hold;
        hold = undefined;
        arrived();
        return;
      }
      if (summary && failing > 0) {
        failing--;
        json(res, 500, {
          error: {
            message: "The server had an error while processing your request.",
            type: "server_error",
            param: null,
            code: null,
          },
        });
        return;
      }
      if (prompt > options.contextLimit) {
        stats.refused++;
        json(res, 400, {
          error: {
            message: `This model's maximum context length is ${options.contextLimit} tokens. However, your messages resulted in ${prompt} tokens. Please reduce the length of the messages.`,
            type: "invalid_request_error",
            param: "messages",
            code: "context_length_exceeded",
          },
        });
        return;
      }
      stats.maxPromptTokens = Math.max(stats.maxPromptTokens, prompt);
      const maxTokens = body.max_completion_tokens ?? body.max_tokens ?? 4096;
      let text: string;
      if (summary) {
        stats.summaryCalls++;
        const chars = Math.min(options.summaryChars ?? 1200, maxTokens * 4);
        text = summaryOf(body, chars);
      } else {
        answers++;
        text = `Answer ${answers}. `.padEnd(options.answerChars, "Lorem ipsum dolor sit amet. ");
      }
      const completion = countText(text);
      if (summary) stats.summaryTokens += prompt + completion;
      stream(res, body.model ?? "fake", text, prompt, completion);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    baseURL: `http://127.0.0.1:${port}/v1`,
    stats,
    failSummaries: (n) => {
      failing = n;
    },
    holdNextSummary: () => new Promise<void>((resolve) => (hold = resolve)),
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** A summary that names what it covered: the answer numbers it saw, so tests can follow it. */
function summaryOf(body: ChatRequest, chars: number): string {
  const last = body.messages.at(-1)?.content;
  const seen = typeof last === "string" ? (last.match(/Answer \d+/gu) ?? []) : [];
  const covered = seen.length === 0 ? "nothing numbered" : `${seen[0]} to ${seen.at(-1)}`;
  return `Summary covering ${covered}. `
    .padEnd(chars, "Facts kept. ")
    .slice(0, Math.max(chars, 40));
}

function json(res: ServerResponse, status: number, value: unknown): void {
  res.writeHead(status, { "content-type": "application/json" });
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
  const base = { id: "chatcmpl-fake", object: "chat.completion.chunk", created: 1, model };
  const frame = (value: unknown): string => `data: ${JSON.stringify(value)}\n\n`;
  let out = frame({
    ...base,
    choices: [{ index: 0, delta: { role: "assistant", content: "" }, finish_reason: null }],
  });
  for (let i = 0; i < text.length; i += 1024) {
    out += frame({
      ...base,
      choices: [{ index: 0, delta: { content: text.slice(i, i + 1024) }, finish_reason: null }],
    });
  }
  out += frame({ ...base, choices: [{ index: 0, delta: {}, finish_reason: "stop" }] });
  out += frame({
    ...base,
    choices: [],
    usage: {
      prompt_tokens: prompt,
      completion_tokens: completion,
      total_tokens: prompt + completion,
    },
  });
  res.end(`${out}data: [DONE]\n\n`);
}
