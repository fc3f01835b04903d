# One image for both processes: `gateway` (HTTP, the default command) and `worker` (Temporal,
# `node dist/services/worker.js`). See docker-compose.yml and docs/production.md.
# Checked by test/platform/production-build.test.ts (every path copied below exists after the build).

# Build stage: every dependency (TypeScript, Temporal's bundler), then `npm run build` into dist/.
FROM node:20-bookworm-slim AS build
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --no-audit --no-fund
COPY tsconfig.json tsconfig.build.json ./
COPY scripts/build.mjs ./scripts/
COPY services ./services
COPY workflows ./workflows
COPY activities ./activities
RUN npm run build

# Runtime stage: production dependencies and the compiled JavaScript only (no TypeScript, no tsx).
FROM node:20-bookworm-slim
WORKDIR /app
ENV NODE_ENV=production \
    HOST=0.0.0.0 \
    PORT=3000 \
    DATA_DIR=/app/data
COPY package.json package-lock.json ./
RUN npm ci --omit=dev --no-audit --no-fund && npm cache clean --force \
    && mkdir -p /app/data && chown node:node /app/data
COPY --from=build /app/dist ./dist
USER node
EXPOSE 3000
# Liveness (docs/production.md, "Probes"): the worker's listener when WORKER_HEALTH_PORT is set (set it
# on worker containers only), else the gateway's PORT. No engine is called, so a missing engine never
# marks a container unhealthy: that is readiness (/readyz).
HEALTHCHECK --interval=10s --timeout=3s --start-period=30s --retries=3 \
  CMD ["node", "-e", "fetch(`http://127.0.0.1:${process.env.WORKER_HEALTH_PORT || process.env.PORT || 3000}/livez`).then((r) => process.exit(r.ok ? 0 : 1), () => process.exit(1))"]
CMD ["node", "dist/services/gateway.js"]
