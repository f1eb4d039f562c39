# Shortlink: one server process per container. Untested: no Docker engine on the project's
# machines (see docs/deployment.md, "Containers").
#
# The base image already is Node 24, so only runtime dependencies are installed: the `node`
# devDependency (which pins Node 24 for npm scripts elsewhere) is not needed, and no package
# needs an install script.
FROM node:24-slim

ENV NODE_ENV=production
WORKDIR /app

COPY package.json package-lock.json ./
RUN npm ci --omit=dev --ignore-scripts --no-audit --no-fund && npm cache clean --force

COPY src ./src

# SQLite's default file lives here when DATABASE_URL is not a postgres:// URL.
RUN mkdir -p /app/data && chown node:node /app/data
USER node

EXPOSE 8080
# Node runs the TypeScript directly (type stripping) and handles SIGTERM itself: no npm in between.
CMD ["node", "src/server.ts"]
