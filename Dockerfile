# queen-gateway's image: a build stage that installs every dependency
# (native modules are compiled here, against this image's glibc, never the
# host's), compiles the TypeScript and prunes the dev dependencies; and a
# small runtime stage with only the build, bin/, package.json and the
# production node_modules, run as the unprivileged `node` user.
#
#   docker build -t queen-gateway .
#   docker run -p 9092:9092 -p 6632:6632 queen-gateway
#   docker run -p 9092:9092 -e QUEEN_ADVERTISED_HOST=kafka.example.internal queen-gateway
#
# test/setup/image-build.test.ts performs these same steps without Docker
# (it reads this file's COPY and RUN lines), so keep each step on one line.
# docs/deployment.md explains the settings.

FROM node:20-bookworm AS build
WORKDIR /app
# Node 20 ships npm 10, which ignores package.json's allowScripts and would run
# every install script (the test-only librdkafka binding's among them): the
# npm the project is developed with honours it.
RUN npm install --global --no-audit --no-fund npm@11.19.1
COPY package.json package-lock.json ./
RUN npm ci --no-audit --no-fund
COPY tsconfig.json tsconfig.build.json ./
COPY bin ./bin
COPY protocol ./protocol
COPY src ./src
RUN npm run build
RUN npm prune --omit=dev --no-audit --no-fund

FROM node:20-bookworm-slim
ENV NODE_ENV=production
# Metadata tells clients to dial this host: localhost suits `docker run -p
# 9092:9092` on one machine; set it to a name your clients resolve otherwise.
ENV QUEEN_ADVERTISED_HOST=localhost
WORKDIR /app
COPY --from=build /app/package.json ./
COPY --from=build /app/bin ./bin
COPY --from=build /app/dist ./dist
COPY --from=build /app/node_modules ./node_modules
USER node
# Kafka, Queen's HTTP API, and the internal RPC (`core` command).
EXPOSE 9092 6632 7070
# The slim image has no curl; Node's own fetch asks /health (200 once the core answers).
HEALTHCHECK --interval=10s --timeout=5s --start-period=30s --retries=3 CMD ["node", "-e", "fetch('http://127.0.0.1:' + (process.env.QUEEN_HTTP_PORT || 6632) + '/health').then((r) => process.exit(r.ok ? 0 : 1), () => process.exit(1))"]
CMD ["node", "bin/queen-gateway.js", "serve", "--host", "0.0.0.0"]
