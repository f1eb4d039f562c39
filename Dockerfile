# Shortlink: one server process per container, SQLite in the /data volume by default, or
# PostgreSQL through DATABASE_URL. Built and run for real with Podman (deploy/podman/README.md).
#
#   docker build -t shortlink .                        # base: node:24-bookworm-slim
#   podman build --build-arg BASE_IMAGE=localhost/shortlink-base:bookworm-node24 -t shortlink .
#
# The base must be Debian with Node 24 and npm on PATH and a `node` user (uid 1000), as the
# official node images are; deploy/podman/base-image.sh makes one without a container registry.
ARG BASE_IMAGE=node:24-bookworm-slim

# ---- build: compile to JavaScript, pack, install the package as users install it ----
FROM ${BASE_IMAGE} AS build
# Behind a TLS-inspecting proxy, the build may name a CA bundle to trust (mounted for the build
# only, e.g. deploy/podman/build.sh); nothing of it reaches the final image.
ARG NODE_EXTRA_CA_CERTS
WORKDIR /src
COPY package.json package-lock.json ./
COPY packages/client/package.json packages/client/
# No install scripts: the only one is the `node` devDependency's, which fetches a Node 24 for
# clones on other Nodes; this image's Node already is 24.
RUN npm ci --ignore-scripts --no-audit --no-fund
COPY tsconfig.json tsconfig.build.json README.md ./
COPY bin bin
COPY scripts scripts
COPY src src
COPY packages/client/src packages/client/src
# prepack: compile to dist/ and state `engines`, then pack and install the tarball with its
# runtime dependencies only. node is called directly: node_modules/.bin/node is that devDependency.
RUN node scripts/prepack.ts \
 && npm pack --ignore-scripts --pack-destination /tmp \
 && npm install --global --prefix /opt/shortlink --omit=dev --no-audit --no-fund /tmp/shortlink-*.tgz \
 && npm cache clean --force

# ---- runtime ----
FROM ${BASE_IMAGE}
# tini as PID 1: forwards SIGTERM to the server (which finishes its requests and exits 0) and
# reaps orphans. Already in the Podman base; from Debian's archive otherwise.
RUN command -v tini >/dev/null \
 || (apt-get update && apt-get install -y --no-install-recommends tini && rm -rf /var/lib/apt/lists/*)
COPY --from=build /opt/shortlink /opt/shortlink
ENV PATH=/opt/shortlink/bin:$PATH \
    NODE_ENV=production \
    HOST=0.0.0.0 \
    PORT=8080 \
    DATABASE_URL=/data/shortlinks.db
# The SQLite database (and its WAL files) live here; mount a volume to keep them.
RUN mkdir -p /data && chown node:node /data
VOLUME /data
USER node
WORKDIR /home/node
EXPOSE 8080
# /healthz touches nothing but the process; /readyz (for load balancers) also asks storage.
HEALTHCHECK --interval=10s --timeout=3s --start-period=10s --retries=3 \
  CMD ["node", "-e", "fetch('http://127.0.0.1:'+(process.env.PORT||8080)+'/healthz').then(r=>process.exit(r.ok?0:1),()=>process.exit(1))"]
STOPSIGNAL SIGTERM
ENTRYPOINT ["tini", "--"]
CMD ["shortlink", "serve"]
