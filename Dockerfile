# fakejs as a container: a JetStream-compatible NATS server for tests.
#
#   docker build -t fakejs .
#   docker run --rm -p 4222:4222 -p 8222:8222 fakejs
#
# BASE_IMAGE may be any image with Python 3.11+ (the default), or a plain Debian bookworm
# image, whose python3 is 3.11 and is installed with apt here.
ARG BASE_IMAGE=python:3.11-slim
FROM ${BASE_IMAGE}

# A container runs one server: no forkserver for later starts (docs/guide/command-line.md#warm-starts).
ENV PYTHONDONTWRITEBYTECODE=1 \
    PYTHONUNBUFFERED=1 \
    FAKEJS_FORKSERVER=0 \
    PIP_NO_CACHE_DIR=1 \
    PIP_DISABLE_PIP_VERSION_CHECK=1 \
    PATH=/opt/fakejs/bin:$PATH

# A virtualenv keeps the install independent of the base image's Python layout and of
# Debian's "externally managed" pip restriction. The server runs as an unprivileged user;
# /data (JetStream file storage) is writable by it and /scenarios is where scenario files
# are mounted.
RUN if ! python3 -m pip --version >/dev/null 2>&1 || ! python3 -c 'import ensurepip' >/dev/null 2>&1; then \
        apt-get update \
        && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends python3 python3-pip python3-venv \
        && rm -rf /var/lib/apt/lists/*; \
    fi \
    && python3 -m venv /opt/fakejs \
    && useradd --system --uid 10001 --user-group --home-dir /data --no-create-home --shell /usr/sbin/nologin fakejs \
    && mkdir -p /data /scenarios \
    && chown fakejs:fakejs /data

# Only what the package build needs (see .dockerignore), so that test or benchmark edits
# don't invalidate this layer. Installs runtime dependencies only.
COPY pyproject.toml setup.py README.md /tmp/fakejs-src/
COPY tools /tmp/fakejs-src/tools
COPY fakejs /tmp/fakejs-src/fakejs
COPY scenarios /tmp/fakejs-src/scenarios
RUN pip install /tmp/fakejs-src && rm -rf /tmp/fakejs-src

USER fakejs
# Relative paths given to the server (scenario files, for one) resolve against the mount.
WORKDIR /scenarios
EXPOSE 4222 8222

# The defaults live in the entrypoint rather than in CMD so that arguments given to
# `docker run IMAGE ...` are appended to them instead of replacing them: `-p 5000` or `-D`
# still binds 0.0.0.0 and stores under /data. JetStream is on (`--jetstream`, as nats-server
# needs `-js`); `--jetstream=false` turns it off. A later flag wins, so every default can be
# overridden (e.g. `-m 9000`). No VOLUME is declared: a throwaway test server should not
# leave an anonymous volume behind on every run; mount one on /data to keep streams.
# Monitoring and the control API (/fakejs/) listen on 0.0.0.0:8222 like the client port:
# publish it only where tests run, or protect it (`--control_token`, `--user/--pass`,
# `--no_control`; see README "Security"). Control requests may start the scenario files
# mounted on /scenarios by file name (`{"name": "orders.toml"}`).
ENTRYPOINT ["fakejs", "--jetstream", "--addr=0.0.0.0", "--port=4222", "--http_port=8222", "--store_dir=/data", "--scenario_dir=/scenarios"]

# Only the Python standard library is available in slim images (no curl). The ports are read
# from the server's own command line with fakejs's flag parser (Go's rules), so the check follows any `-p`/`-m`
# given at `docker run`; with monitoring off (`-m 0`) it waits for the client port's INFO.
HEALTHCHECK --interval=10s --timeout=5s --start-period=5s --retries=3 \
    CMD ["python", "-c", "import socket, sys, urllib.request\nfrom fakejs.cli import parse_command_line\nargv = open('/proc/1/cmdline', 'rb').read().decode().split('\\0')[:-1]\nstart = next(i for i, arg in enumerate(argv) if arg.rsplit('/', 1)[-1] == 'fakejs') + 1\nflags = parse_command_line(argv[start:]).values\nhost = '127.0.0.1' if flags['addr'] in ('0.0.0.0', '::', '') else flags['addr']\nif flags['http_port'] > 0:\n    sys.exit(0 if urllib.request.urlopen(f'http://{host}:{flags[\"http_port\"]}/healthz', timeout=4).status == 200 else 1)\nwith socket.create_connection((host, flags['port'] if flags['port'] > 0 else 4222), timeout=4) as conn:\n    sys.exit(0 if conn.recv(4) == b'INFO' else 1)\n"]
