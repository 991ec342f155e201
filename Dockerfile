# migrun in a container: a build stage with the Swift toolchain runs the install script (a release
# build with the Swift runtime linked in, man pages, completions; the commit is built in); the runtime stage
# has no toolchain, only Debian's Lua 5.4, SQLite and zlib.
#
#   docker build -t migrun . && docker run --rm -v "$PWD:/work" -w /work migrun migrate Store.sqlite --model Model.xcdatamodeld
#
# The build stage's image is the Swift project's official one (Debian bookworm); any Swift 6 toolchain
# image on Debian works, as the install script needs only the toolchain and apt.
FROM swift:6.2-bookworm AS build
WORKDIR /src
COPY . .
RUN scripts/install --prefix /opt/migrun

FROM debian:bookworm-slim
RUN apt-get update \
  && apt-get install -y --no-install-recommends liblua5.4-0 libsqlite3-0 zlib1g \
  && rm -rf /var/lib/apt/lists/*
COPY --from=build /opt/migrun /usr/local
ENTRYPOINT ["migrun"]
CMD ["--version"]
