#!/bin/sh
# weir.pc hands users msgpack's compile flags and weir's, none of libzmq's
# private include folders (libzmq is no Requires.private of it), and a
# static link still gets -lzmq.  The build tree's weir.pc under 'make
# check', the installed one under 'make installcheck'.
. "$(dirname "$0")/lib.sh"
: "${WEIR_PC_DIR:?WEIR_PC_DIR must point at the folder of weir.pc}"
: "${MSGPACK_PC:?MSGPACK_PC must name the pkg-config package of msgpack-c}"
PKG_CONFIG=${PKG_CONFIG:-pkg-config}

# weir.pc itself: in a build tree pkg-config would read
# weir-uninstalled.pc instead, which is checked below
pc () {
    PKG_CONFIG_DISABLE_UNINSTALLED=1 PKG_CONFIG_PATH="$WEIR_PC_DIR${PKG_CONFIG_PATH:+:$PKG_CONFIG_PATH}" \
        "$PKG_CONFIG" "$@"
}

[ -f "$WEIR_PC_DIR/weir.pc" ] && ok || fail "no weir.pc in $WEIR_PC_DIR"
cflags=$(pc --cflags weir) && ok || fail "pkg-config --cflags weir failed"
includedir=$(pc --variable=includedir weir)
msgpack=$("$PKG_CONFIG" --cflags "$MSGPACK_PC")
for flag in $cflags; do
    case " $msgpack -I$includedir " in
        *" $flag "*) ok ;;
        *) fail "pkg-config --cflags weir gives $flag, neither msgpack's nor weir's: $cflags" ;;
    esac
done
# pkg-config leaves out the system's own include folder
case $includedir in
    /usr/include) ok ;;
    *) case " $cflags " in *" -I$includedir "*) ok ;; *) fail "no -I$includedir in: $cflags" ;; esac ;;
esac

# Dynamic linking needs -lweir alone; a static link gets libzmq too
libs=$(pc --libs weir)
case " $libs " in *" -lweir "*) ok ;; *) fail "no -lweir in: $libs" ;; esac
case " $libs " in *" -lzmq "*) fail "a dynamic link gets -lzmq: $libs" ;; *) ok ;; esac
static=$(pc --static --libs weir)
case " $static " in *" -lzmq "*) ok ;; *) fail "a static link does not get -lzmq: $static" ;; esac

# A build tree: weir-uninstalled.pc points at its headers and library,
# so a plugin builds before weir is installed; it is never installed
if [ "$WEIR_PC_DIR" = "${WEIR_BUILD_TREE:-}" ]; then
    [ -f "$WEIR_PC_DIR/weir-uninstalled.pc" ] && ok || fail "no weir-uninstalled.pc in the build tree"
    tree=$(PKG_CONFIG_PATH="$WEIR_PC_DIR" "$PKG_CONFIG" --cflags weir)
    case " $tree " in *" -I$WEIR_BUILD_TREE/public "*) ok ;; *) fail "the build tree's cflags: $tree" ;; esac
    case " $(PKG_CONFIG_PATH="$WEIR_PC_DIR" "$PKG_CONFIG" --libs weir) " in
        *" -L$WEIR_BUILD_TREE/.libs "*) ok ;;
        *) fail "the build tree's libs: $(PKG_CONFIG_PATH="$WEIR_PC_DIR" "$PKG_CONFIG" --libs weir)" ;;
    esac
    # What docs/plugins.md says to do: a plugin built with those flags loads
    # shellcheck disable=SC2046
    ${CC:-cc} -std=c11 -Wall -Werror -shared -fPIC $(PKG_CONFIG_PATH="$WEIR_PC_DIR" "$PKG_CONFIG" --cflags weir) \
        "$TOP_SRCDIR/tests/plugins/accumulate.c" -o "$T/acc.so" 2>"$T/err" && ok \
        || fail "a plugin does not build against the build tree: $(cat "$T/err")"
    "$WEIR" plugin "$T/acc.so" > /dev/null && ok || fail "the plugin built against the build tree does not load"
else
    [ ! -e "$WEIR_PC_DIR/weir-uninstalled.pc" ] && ok || fail "weir-uninstalled.pc was installed"
fi

finish
