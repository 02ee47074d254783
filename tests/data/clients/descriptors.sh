#!/usr/bin/env bash
# A test fixture: a client that opens a connection to the first node it is given (its
# fault proxy), sends a PING through it, then writes to the file named by $1 what it can
# see: "own FD TARGET REMOTE-PORT" for each of its descriptors (the port for a TCP socket),
# and "inheritable FD TARGET" for each descriptor of lockstep, its parent, that is not
# close-on-exec (a program lockstep starts would inherit it).
set -u
first=${LOCKSTEP_REDIS%%,*}
out="$1.$LOCKSTEP_CLIENT"
echo "proxy ${first##*:}" >"$out"
exec 3<>"/dev/tcp/${first%:*}/${first##*:}"
printf '*1\r\n$4\r\nPING\r\n' >&3
read -r -t 5 pong <&3
echo "pong ${pong%$'\r'}" >>"$out"

# The remote port of the TCP socket with this inode, or "-". One awk pass over the tables:
# on a machine that has just run a live suite they hold thousands of TIME_WAIT lines.
remote_port() {
  local hex
  hex=$(awk -v inode="$1" '$10 == inode { n = split($3, a, ":"); print a[n]; exit }' /proc/net/tcp /proc/net/tcp6)
  if [ -n "$hex" ]; then echo $((16#$hex)); else echo -; fi
}

lines=()
for fd in /proc/$$/fd/*; do
  target=$(readlink "$fd") || continue
  port=-
  if [[ $target == socket:\[*\] ]]; then
    inode=${target#socket:[}
    port=$(remote_port "${inode%]}")
  fi
  lines+=("own ${fd##*/} $target $port")
done
for info in /proc/$PPID/fdinfo/*; do
  fd=${info##*/}
  [ "$fd" -le 2 ] && continue
  flags=$(sed -n 's/^flags:[[:space:]]*//p' "$info" 2>/dev/null) || continue
  [ -n "$flags" ] || continue
  if (((8#$flags & 8#2000000) == 0)); then
    lines+=("inheritable $fd $(readlink "/proc/$PPID/fd/$fd")")
  fi
done
printf '%s\n' "${lines[@]}" >>"$out"
mv "$out" "$1"
