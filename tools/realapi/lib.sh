# shellcheck shell=bash
# Shared by build.sh and start.sh (sourced): where the cache is and which
# build of the server belongs to this work tree.

# The cache folder: $REALAPI_CACHE or ~/.cache/kubectl-fleet-realapi.
realapi_cache() {
  echo "${REALAPI_CACHE:-${HOME:-/root}/.cache/kubectl-fleet-realapi}"
}

# The key of the server build for this work tree: a hash of main.go,
# build.sh and the resolved package set. build.sh writes
# $CACHE/bin/fleet-realapi-server-KEY; start.sh runs that one.
realapi_server_key() { # TOOLS_DIR CACHE
  cat "$1/main.go" "$1/build.sh" "$2/packages.txt" 2>/dev/null | sha256sum | cut -c1-16
}

# The server binary start.sh runs: $REALAPI_BIN_DIR/fleet-realapi-server when
# that folder is given, else this work tree's keyed build in the cache.
realapi_server_bin() { # TOOLS_DIR
  if [ -n "${REALAPI_BIN_DIR:-}" ]; then
    echo "$REALAPI_BIN_DIR/fleet-realapi-server"
  else
    local cache
    cache="$(realapi_cache)"
    echo "$cache/bin/fleet-realapi-server-$(realapi_server_key "$1" "$cache")"
  fi
}

# etcd: $REALAPI_BIN_DIR/etcd or the cache's.
realapi_etcd_bin() {
  echo "${REALAPI_BIN_DIR:-$(realapi_cache)/bin}/etcd"
}
