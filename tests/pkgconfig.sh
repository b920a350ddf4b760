#!/bin/sh
# weir.pc hands users msgpack's compile flags and weir's, none of libzmq's
# private include folders (libzmq is no Requires.private of it), and a
# static link still gets -lzmq.  The build tree's weir.pc under 'make
# check', the installed one under 'make installcheck'.
. "$(dirname "$0")/lib.sh"
: "${WEIR_PC_DIR:?WEIR_PC_DIR must point at the folder of weir.pc}"
: "${MSGPACK_PC:?MSGPACK_PC must name the pkg-config package of msgpack-c}"
PKG_CONFIG=${PKG_CONFIG:-pkg-config}

pc () {
    PKG_CONFIG_PATH="$WEIR_PC_DIR${PKG_CONFIG_PATH:+:$PKG_CONFIG_PATH}" "$PKG_CONFIG" "$@"
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

finish
