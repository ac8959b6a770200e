#!/usr/bin/env bash
# Installs the Debian packages Ferry builds and tests with, when they are missing and we can.
# Sourced by serve.sh and test.sh; pass the package names to check.
ferry_ensure_packages() {
    local missing=()
    for package in "$@"; do
        dpkg -s "$package" >/dev/null 2>&1 || missing+=("$package")
    done
    [ ${#missing[@]} -eq 0 ] && return 0
    if ! command -v apt-get >/dev/null 2>&1; then
        echo "ferry: missing packages (${missing[*]}) and no apt-get to install them; install them by hand" >&2
        return 1
    fi
    local sudo=""
    [ "$(id -u)" -ne 0 ] && sudo="sudo"
    echo "ferry: installing ${missing[*]}" >&2
    $sudo apt-get update -qq >/dev/null && $sudo env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${missing[@]}" >/dev/null
}
