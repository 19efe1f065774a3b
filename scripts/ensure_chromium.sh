#!/usr/bin/env bash
# Best effort: the report test loads the HTML page in headless Chromium from Debian's packages.
# Installs it when missing and we are root with apt; otherwise that one test skips and says why.
set -u
command -v chromium >/dev/null 2>&1 && exit 0
if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
  echo "installing Debian's chromium for the report test (one time)..."
  (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null) \
    || echo "could not install chromium; the browser test will skip"
fi
exit 0
