# syntax=docker/dockerfile:1
# Tether container image: build with dev dependencies, run with production dependencies only.
# test/e2e/production-start.test.ts parses this file (ENTRYPOINT, CMD, EXPOSE, ENV) and starts
# the server exactly this way, so keep those lines plain: one instruction per line, JSON form.

ARG NODE_IMAGE=node:20.20.2-bookworm-slim

# --- build: compile TypeScript to dist/ -------------------------------------------------------
FROM ${NODE_IMAGE} AS build
WORKDIR /src
COPY package.json package-lock.json ./
RUN npm ci --no-audit --no-fund
COPY tsconfig.json tsconfig.build.json ./
COPY types ./types
COPY src ./src
RUN npm run build

# --- prod-deps: node_modules without dev dependencies ----------------------------------------
FROM ${NODE_IMAGE} AS prod-deps
WORKDIR /src
COPY package.json package-lock.json ./
RUN npm ci --omit=dev --ignore-scripts --no-audit --no-fund && npm cache clean --force

# --- runtime ----------------------------------------------------------------------------------
FROM ${NODE_IMAGE} AS runtime
# tini is PID 1: it forwards SIGTERM to node and reaps zombies (docs/adr/0300).
RUN apt-get update \
 && apt-get install -y --no-install-recommends tini=0.19.0-1+b3 \
 && rm -rf /var/lib/apt/lists/* \
 && groupadd --system --gid 10001 tether \
 && useradd --system --uid 10001 --gid 10001 --home-dir /tmp --no-create-home \
      --shell /usr/sbin/nologin tether
WORKDIR /app
COPY --from=prod-deps /src/node_modules ./node_modules
COPY --from=build /src/dist ./dist
COPY package.json package-lock.json ./

# The root filesystem may be read-only: everything that writes goes to /tmp (an emptyDir in the
# Helm chart). npm is never run at start, but HOME and its cache point there all the same.
ENV NODE_ENV=production
ENV HOME=/tmp
ENV NPM_CONFIG_CACHE=/tmp/.npm
ENV TMPDIR=/tmp
ENV TETHER_HOST=0.0.0.0
ENV TETHER_PORT=50051
ENV TETHER_METRICS_PORT=9464

# gRPC, gRPC-Web and Connect on one port; Prometheus metrics on the other.
EXPOSE 50051
EXPOSE 9464

# A numeric user, so that Kubernetes runAsNonRoot can verify it without a runAsUser.
USER 10001:10001

ENTRYPOINT ["/usr/bin/tini", "--"]
CMD ["node", "--enable-source-maps", "dist/server/main.js"]
