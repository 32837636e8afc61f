# Shared by the scripts in this folder: sourced from the repository's root,
# not run.

# need_fio SCRIPT: exits 2, saying how to install it, when fio is missing
# (the scripts that compare with real fio do not install it themselves).
need_fio() {
    command -v fio >/dev/null && return
    echo "$1: fio is not installed (on Debian/Ubuntu: sudo apt-get install -y fio)" >&2
    exit 2
}
