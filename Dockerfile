# durable-react worker / CLI image (Debian-based: the Temporal core-bridge needs glibc).
FROM node:20-bookworm-slim
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --no-audit --no-fund
COPY . .
ENV NODE_ENV=production
CMD ["node", "--import", "tsx", "workers/main.ts"]
