# durable-react worker / CLI image (Debian-based: the Temporal core-bridge needs glibc).
FROM node:20-bookworm-slim
WORKDIR /app
COPY . .
# npm ci runs the prepare script: the web chat bundle and the compiled worker (dist/worker.cjs).
RUN npm ci --no-audit --no-fund
ENV NODE_ENV=production
CMD ["node", "dist/worker.cjs"]
