#!/usr/bin/env bash
# make screenshots: runs `kbatch demo` in a private tmux server at fixed
# sizes (140x40, then 80x24), drives it with keys to the screens the README
# shows, captures each with `tmux capture-pane -e -p` and renders it as a
# PNG in screenshots/ with freeze.
#
# Needs tmux and Go. freeze v0.2.2 is taken from $FREEZE, .cache/bin,
# $(go env GOPATH)/bin or PATH, else installed into .cache/bin (never
# globally). pngquant, when installed, shrinks the PNGs (apt-get install
# pngquant). Every wait polls the screen and gives up after $WAIT seconds.
set -euo pipefail
cd "$(dirname "$0")/.."

BIN=${KBATCH_BIN:-bin/kbatch}
OUT=screenshots
WAIT=${WAIT:-120}
FREEZE_VERSION=v0.2.2
FONT=${SCREENSHOT_FONT:-DejaVu Sans Mono}

die() { echo "screenshots: $*" >&2; exit 1; }
command -v tmux >/dev/null || die "tmux is needed (apt-get install tmux)"
[ -x "$BIN" ] || die "$BIN is missing; run make build"

# freeze: an installed v0.2.2, or one installed into .cache/bin now.
find_freeze() {
  local f
  for f in "${FREEZE:-}" .cache/bin/freeze "$(go env GOPATH)/bin/freeze" "$(command -v freeze || true)"; do
    if [ -n "$f" ] && [ -x "$f" ] && "$f" --version 2>/dev/null | grep -q "$FREEZE_VERSION"; then
      echo "$f"
      return
    fi
  done
  echo "screenshots: installing freeze $FREEZE_VERSION into .cache/bin" >&2
  GOBIN="$PWD/.cache/bin" go install "github.com/charmbracelet/freeze@$FREEZE_VERSION"
  echo .cache/bin/freeze
}
FREEZE_BIN=$(find_freeze)

work=$(mktemp -d)
sock="$work/tmux.sock"
cleanup() {
  tmux -S "$sock" kill-server 2>/dev/null || true
  rm -rf "$work"
}
trap cleanup EXIT

# freeze-ansi restates tmux's capture so freeze draws it as a terminal does;
# pngtext checks that every picture has its text drawn (freeze draws none,
# and exits 0, when it does not find the font family).
go build -o "$work/freeze-ansi" scripts/freeze-ansi.go
go build -o "$work/pngtext" scripts/pngtext.go
printf 'set -g status off\n' >"$work/tmux.conf"

tm() { tmux -S "$sock" "$@"; }
screen() { tm capture-pane -p -t kb; }

# wait_for REGEX WHAT: poll the screen until REGEX (grep -E) matches.
wait_for() {
  local deadline=$((SECONDS + WAIT))
  until screen | grep -Eq -- "$1"; do
    if [ "$SECONDS" -ge "$deadline" ]; then
      screen >&2
      die "no $2 after ${WAIT}s (the screen is above)"
    fi
    sleep 0.2
  done
}

# wait_gone REGEX WHAT: poll the screen until REGEX no longer matches.
wait_gone() {
  local deadline=$((SECONDS + WAIT))
  while screen | grep -Eq -- "$1"; do
    [ "$SECONDS" -lt "$deadline" ] || die "$2 did not go away after ${WAIT}s"
    sleep 0.2
  done
}

# keys KEY...: tmux key names (Enter, Escape, Space) or single characters.
keys() { for k in "$@"; do tm send-keys -t kb "$k"; done; }
# type TEXT: literal text.
type_text() { tm send-keys -t kb -l -- "$1"; }

# shot NAME: the screen as it is now, as screenshots/NAME.png.
shot() {
  tm capture-pane -e -p -t kb >"$work/$1.ansi"
  "$work/freeze-ansi" <"$work/$1.ansi" >"$work/$1.freeze.ansi"
  local png="$work/png/$1.png"
  # A monospace font by name: freeze's fallback is proportional on some machines.
  # freeze's own rasterizer crashes on some machines; rsvg-convert (apt-get
  # install librsvg2-bin) then draws freeze's SVG.
  if ! "$FREEZE_BIN" "$work/$1.freeze.ansi" --language ansi --font.family "$FONT" --font.size 7 --output "$png" >/dev/null 2>"$work/freeze.err"; then
    command -v rsvg-convert >/dev/null || { cat "$work/freeze.err" >&2; die "freeze failed on $1 (and rsvg-convert is missing)"; }
    "$FREEZE_BIN" "$work/$1.freeze.ansi" --language ansi --font.family "$FONT" --font.size 7 --output "$work/$1.svg" >/dev/null
    rsvg-convert --zoom 2 "$work/$1.svg" -o "$png"
  fi
  "$work/pngtext" "$png" || die "$1.png has no text: is the font \"$FONT\" installed (fc-list)? SCREENSHOT_FONT names another"
  if command -v pngquant >/dev/null; then
    pngquant --force --skip-if-larger --quality 60-90 --speed 1 --output "$png" "$png" || true
  fi
  echo "screenshots: $1.png ($(($(wc -c <"$png") / 1024)) KB)"
}

mkdir -p "$OUT" "$work/png"
tmux -u -S "$sock" -f "$work/tmux.conf" new-session -d -s kb -x 140 -y 40 \
  "env -u NO_COLOR LANG=C.UTF-8 XDG_CONFIG_HOME=$work/config XDG_STATE_HOME=$work/state $BIN demo --rate 600 --store $work/offsets.db"

# 140x40. Some batches first, so the trends and the batch list fill.
wait_for 'Batches [0-9]+ · latest ([89]|[0-9]{2,})' "8 batches"
# Seek events[1] 500 back: an event, and a batch marked as a jump.
keys 1 j
wait_for '> events\[1\]' "events[1] selected"
keys s
wait_for 'offset>' "the seek form"
type_text -500
keys Enter
wait_for 'seek +events\[1\]: seek from' "the seek event"
wait_for 'Batches [0-9]+ · latest (1[6-9]|[2-9][0-9]|[0-9]{3,})' "16 batches"
shot live
# The seek form, explaining a bad offset, over the live screen.
keys s
wait_for 'offset>' "the seek form"
type_text 12ab
keys Enter
wait_for 'invalid offset' "the seek form's explanation"
shot seek
keys Escape
wait_gone 'offset>' "the seek form"
# The jumped batch selected: its ranges beneath, the jump marked.
# The list is newest first and grows while the shots are taken: walk up
# from the oldest batch.
keys 2 G
for _ in $(seq 300); do
  screen | grep -Eq '┃> +\*[0-9]+ ' && break
  keys k
  sleep 0.05
done
wait_for '\* (jump: )?seek' "the jumped batch's ranges"
shot batch-ranges
# Replay the jumped batch's ranges.
keys r
wait_for 'ranges> ' "the replay form"
keys Enter
wait_for 'done in' "the replay to finish"
shot replay
keys Escape
wait_gone 'REPLAY' "the replay view"

# 80x24: the same program, resized; one pane at a time behind tabs.
tm resize-window -t kb -x 80 -y 24
keys 1
wait_for '┏━ Partitions' "the partitions tab"
shot live-80x24
keys 2
wait_for '┏━ Batches' "the batches tab"
shot batches-80x24
# A record in full: the key, the value pretty-printed, the headers.
keys 3 g
wait_for '┏━ Records' "the records tab"
keys Enter
wait_for 'value +[0-9.]+ k?B · JSON' "a record's detail"
shot record-80x24
keys Escape
wait_gone 'timestamp  ' "the record's detail"
# A hostile record (terminal escapes, a bidi override) shown escaped: replay
# all of sensor-data, filter for it, open it.
found=
for _ in $(seq 12); do
  keys 2 r
  wait_for 'ranges> ' "the replay form"
  keys C-u
  type_text 'sensor-data:*:earliest-latest'
  keys Enter
  wait_for 'done in' "the replay to finish"
  keys /
  type_text maintenance
  keys Enter
  wait_for '/ maintenance' "the filter"
  if screen | grep -Eq '\(([1-9][0-9]*) of [0-9]+ records?; esc clears\)'; then
    found=1
    break
  fi
  keys Escape
  wait_gone '/ maintenance' "the filter"
  keys Escape
  wait_gone 'REPLAY' "the replay view"
  sleep 5 # the demo writes a hostile record every few seconds
done
[ -n "$found" ] || die "no hostile record in sensor-data"
keys Enter
wait_for 'x1b\]0;you have been pwned' "the hostile record's detail"
shot hostile-80x24

# All went well: replace the old pictures (only the ones this script makes; the registry
# pictures of docs/schemas.md come from a real registry, see that page).
mv -f "$work"/png/*.png "$OUT"/
ls -l "$OUT"
