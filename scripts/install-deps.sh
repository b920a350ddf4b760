#!/bin/sh
# Install what weir needs to build and test on Debian (12 or later).
# Idempotent: installs only the packages that are missing, and does
# nothing at all when every one is there.
set -eu

# msgpack-c's C library is libmsgpack-c-dev from Debian 13 on, part of
# libmsgpack-dev before
msgpack=libmsgpack-dev
if apt-cache show libmsgpack-c-dev >/dev/null 2>&1; then
    msgpack=libmsgpack-c-dev
fi

# simdjson parses JSON for the json reader (g++ compiles its interface);
# zlib and libzstd read and write compressed files (gzip and zstd, the
# command, make the tests' files); the data set and liblinear serve the
# hogwild example and its tests; libmicrohttpd serves --metrics, which
# the tests scrape with curl; libpq-dev is the postgres writer's header
# (libpq itself is loaded when a job writes to PostgreSQL) and
# postgresql the server its tests start, each in a folder of its own;
# librdkafka-dev the kafka reader's header and the library of the tests'
# mock cluster, kcat the peer of its benchmark;
# jq and python3 read back every line the JSON tests write; groff renders
# the manual page in its test; Open MPI runs jobs across ranks and hosts,
# iproute2 makes the two "hosts" of tests/cli_mpi_tcp.sh, and procps's
# pgrep finds the ranks that tests/cli_mpi*.sh stop and kill
packages="gcc g++ make autoconf automake libtool pkg-config libzmq3-dev $msgpack libleveldb-dev libsimdjson-dev libpcre2-dev check zlib1g-dev libzstd-dev gzip zstd libmicrohttpd-dev curl libpq-dev postgresql librdkafka-dev kcat dataset-fashion-mnist liblinear-tools jq python3 groff-base openmpi-bin libopenmpi-dev iproute2 procps"

missing=
for p in $packages; do
    if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
        missing="$missing $p"
    fi
done

if [ -z "$missing" ]; then
    echo "install-deps: every dependency is installed"
    exit 0
fi

if [ "$(id -u)" -eq 0 ]; then
    sudo=
elif command -v sudo >/dev/null; then
    sudo=sudo
else
    echo "install-deps: need root (or sudo) to install:$missing" >&2
    exit 1
fi

echo "install-deps: installing$missing"
$sudo apt-get update -qq
# shellcheck disable=SC2086
DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends $missing
