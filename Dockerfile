# One image for both processes: `gateway` (HTTP) and `worker` (Temporal). See docker-compose.yml.
FROM node:20-bookworm-slim
WORKDIR /app
ENV NODE_ENV=production
COPY package.json package-lock.json ./
RUN npm install --omit=dev --no-audit --no-fund
COPY services ./services
COPY workflows ./workflows
COPY activities ./activities
COPY tsconfig.json ./
USER node
EXPOSE 3000
CMD ["node", "--import", "tsx", "services/gateway.ts"]
