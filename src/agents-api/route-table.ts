// The front door's routes: a find-my-way radix router (ADR 0037) that only matches paths; the
// pipeline around a route (auth, body, errors) is front-door.ts's, the same for every route.
import Router from "find-my-way";
import type { TenantScope } from "../api/tenancy.js";
import type { HttpResponse } from "./http-io.js";

/** One request as a route sees it: checked tenant, path parameters, query, parsed body. */
export interface Call {
  scope: TenantScope;
  params: Readonly<Record<string, string | undefined>>;
  query: Readonly<Record<string, string>>;
  /** Request headers, names in lower case. */
  headers: Readonly<Record<string, string | string[] | undefined>>;
  body: unknown;
  /** A request header by its lower-case name (the first value of a repeated one). */
  header(name: string): string | undefined;
  /** The request's span as a W3C traceparent, stored with input it submits (tracing on). */
  trace?: string | undefined;
}

export interface Reply {
  status: number;
  body: unknown;
  /** A streamed answer (SSE) instead of `body`: it writes its own head, with these headers. */
  stream?: (res: HttpResponse, headers: Record<string, string>) => Promise<void>;
}

export type Route = (call: Call) => Promise<Reply>;
export type Method = "GET" | "POST" | "DELETE";

export interface Match {
  route: Route;
  /** The route as declared, e.g. `GET /v1/agents/sessions/:session_id`: a bounded metric label. */
  pattern: string;
  /** The path pattern alone (`/v1/agents/sessions/:session_id`), the span's `http.route`. */
  path: string;
  params: Record<string, string | undefined>;
  query: Record<string, string>;
}

export interface RouteTable {
  add(method: Method, path: string, route: Route): void;
  /** The route for a request line, or undefined for a path or method no route serves. */
  find(method: string, url: string): Match | undefined;
}

const unused = () => undefined;

export function createRouteTable(): RouteTable {
  const router = Router({ ignoreTrailingSlash: true, ignoreDuplicateSlashes: true });
  return {
    add(method, path, route) {
      router.on(method, path, unused, { route, path, pattern: `${method} ${path}` });
    },
    find(method, url) {
      if (method !== "GET" && method !== "POST" && method !== "DELETE") return undefined;
      const found = router.find(method, url);
      if (!found) return undefined;
      const { route, pattern, path } = found.store as Pick<Match, "route" | "pattern" | "path">;
      // The router hands back the query parsed; a key given twice keeps its last value.
      const query: Record<string, string> = {};
      for (const [key, value] of Object.entries(found.searchParams as Record<string, unknown>)) {
        query[key] = Array.isArray(value) ? String(value.at(-1)) : String(value);
      }
      return { route, pattern, path, params: found.params, query };
    },
  };
}
