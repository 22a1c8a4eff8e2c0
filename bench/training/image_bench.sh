#!/usr/bin/env bash
# Issue 35's figures, both sides in one run, same images, same transforms,
# same cores:
#   1. The loader alone: images per second decoded and transformed by the
#      worker's loader (ringleader-image-loader: an ImageFolder listed as a
#      job lists it, a BatchLoader with N threads) against torchvision's
#      DataLoader (bench/training/torchvision_loader.py: Debian's python3-torchvision,
#      PIL, num_workers = N), N = $THREADS (default: the cores). Training
#      recipe RandomResizedCrop(224) + RandomHorizontalFlip, and evaluation's
#      Resize(256) + CenterCrop(224), both then ToTensor and Normalize. Two
#      data sets: Fashion-MNIST written as files at 64..320 px per side
#      (examples/resnet/prepare_images.py --sizes 64,320 --format mixed: JPEG,
#      grayscale JPEG and PNG), and the photographs Debian's mate-backgrounds
#      ships (1280x1024 to 5640x3172 JPEGs, GPL-2+; bench/common/setup.sh installs
#      it) at their native sizes, each listed $PHOTO_COPIES times.
#   2. Training: the ResNet example (2 ranks, 1 epoch of $RESNET_TRAIN
#      samples) from .npy (resnet_fashion_mnist.textproto) and from an
#      ImageFolder copy of the same images (resnet_image_folder.textproto):
#      samples/s (bench/common/train_watch.py) and each rank's data-wait share of
#      its steps (from the timeline: data_wait span time / wall time).
# Writes $RESULTS (default bench/results/images.jsonl) and prints the tables.
# PARTS="loader train" (the default) picks the parts.
#   bench/training/image_bench.sh
set -euo pipefail
cd "$(dirname "$0")/../.."
PY=/usr/bin/python3
THREADS="${THREADS:-$(nproc)}"
FM_IMAGES="${FM_IMAGES:-3000}"
PHOTO_COPIES="${PHOTO_COPIES:-4}"
EPOCHS="${EPOCHS:-2}"
RESNET_TRAIN="${RESNET_TRAIN:-12800}"
RESNET_TEST="${RESNET_TEST:-1000}"
RESULTS="${RESULTS:-bench/results/images.jsonl}"
TMP="$(mktemp -d "${TMPDIR:-/tmp}/ringleader-image-bench.XXXXXX")"
COORD=""
cleanup() {
  [[ -n $COORD ]] && kill "$COORD" 2>/dev/null
  rm -rf "$TMP"
}
trap cleanup EXIT
PARTS="${PARTS:-loader train}"
. bench/common/lib.sh
targets=()
[[ $PARTS == *loader* ]] && targets+=(//bench/training:ringleader-image-loader)
[[ $PARTS == *train* ]] && targets+=(//worker:ringleader-worker
  //coordinator:ringleader-coordinator //cli:ringctl)
build_opt "${targets[@]}"
ls /usr/share/backgrounds/mate/nature/*.jpg >/dev/null ||
  { echo "no photographs: bench/common/setup.sh installs mate-backgrounds" >&2; exit 1; }
[[ -n ${KEEP_RESULTS:-} ]] || : >"$RESULTS"
stamp() { echo "\"date\": \"$(date -u +%FT%TZ)\", \"load\": \"$(cut -d' ' -f1-3 /proc/loadavg)\""; }

if [[ $PARTS == *loader* ]]; then
# The data sets, read once so both sides find them in the page cache.
"$PY" examples/resnet/prepare_images.py --out "$TMP/fm" --limit-train "$FM_IMAGES" \
  --limit-test 10 --sizes 64,320 --format mixed --skip-model >/dev/null
for f in /usr/share/backgrounds/mate/*/*.jpg; do
  cls="$TMP/photos/$(basename "$(dirname "$f")")"
  mkdir -p "$cls"
  for c in $(seq "$PHOTO_COPIES"); do ln -sf "$f" "$cls/$c-$(basename "$f")"; done
done
cat "$TMP"/fm/train/*/* /usr/share/backgrounds/mate/*/*.jpg >/dev/null

loader_row() {  # DATA MODE IMPL JSON
  echo "{\"bench\": \"loader\", \"data\": \"$1\", \"mode\": \"$2\", $(stamp), ${4#\{}" |
    tee -a "$RESULTS"
}
for data in fm photos; do
  root="$TMP/$data"; [[ $data == fm ]] && root="$TMP/fm/train"
  for mode in train eval; do
    flag=(); pyflag=()
    [[ $mode == eval ]] && flag=(--eval) && pyflag=(--eval)
    loader_row "$data" "$mode" ringleader "$("$BIN/bench/training/ringleader-image-loader" \
      --root="$root" --threads="$THREADS" --epochs="$EPOCHS" "${flag[@]}")"
    loader_row "$data" "$mode" torchvision "$("$PY" bench/training/torchvision_loader.py \
      --root "$root" --workers "$THREADS" --epochs "$EPOCHS" "${pyflag[@]}")"
  done
done

fi

# Training from .npy and from the ImageFolder copy.
if [[ $PARTS == *train* ]]; then
M=resnet
prepare_example resnet
"$PY" examples/resnet/prepare_images.py --out "$TMP/resnet-images" \
  --limit-train "$RESNET_TRAIN" --limit-test "$RESNET_TEST" >/dev/null
cp "$TMP/resnet/model.pt" "$TMP/resnet-images/model.pt"
mkdir -p "$TMP/coord"
start_coordinator "$TMP/coord"
for src in npy images; do
  file=examples/resnet/resnet_fashion_mnist.textproto data="$TMP/resnet"
  [[ $src == images ]] && file=examples/resnet_image_folder.textproto data="$TMP/resnet-images"
  mkdir -p "$TMP/tl-$src"
  "$PY" bench/common/example_job.py "$file" "$TMP/$src.textproto" --data "$data" \
    --world 2 --batch 64 --epochs 1 --timeline "$TMP/tl-$src"
  run_job "$TMP/$src.textproto" 2 "$TMP/$src.watch" "$TMP/$src"
  row=$("$PY" bench/common/train_watch.py "$TMP/$src.watch" "ringleader-$src" resnet 2 128)
  share=$("$PY" - "$TMP/tl-$src" <<'PY'
import glob, json, sys
shares = []
for path in sorted(glob.glob(sys.argv[1] + "/*.trace.json")):
    ev = [e for e in json.load(open(path))["traceEvents"] if e.get("ph") == "X"]
    if not ev:
        continue
    wall = max(e["ts"] + e["dur"] for e in ev) - min(e["ts"] for e in ev)
    wait = sum(e["dur"] for e in ev if e["name"] == "data_wait")
    shares.append(round(wait / wall, 4))
print(json.dumps(shares))
PY
)
  echo "{\"bench\": \"train\", \"data\": \"$src\", $(stamp), \"data_wait_share\": $share, ${row#\{}" |
    tee -a "$RESULTS"
done
fi

"$PY" - "$RESULTS" "$THREADS" <<'PY'
import json, sys
rows = [json.loads(l) for l in open(sys.argv[1])]
n = int(sys.argv[2])
print(f"\nloader images/s at {n} threads (per core in brackets)")
for data in ("fm", "photos"):
    for mode in ("train", "eval"):
        r = {x["impl"]: x["images_per_sec"] for x in rows
             if x["bench"] == "loader" and x["data"] == data and x["mode"] == mode}
        if len(r) == 2:
            print(f"  {data:6} {mode:5}  ringleader {r['ringleader']:8.1f} ({r['ringleader']/n:7.1f})"
                  f"  torchvision {r['torchvision']:8.1f} ({r['torchvision']/n:7.1f})"
                  f"  ratio {r['ringleader']/r['torchvision']:.2f}x")
t = {x["data"]: x for x in rows if x["bench"] == "train"}
if len(t) == 2:
    a, b = t["npy"]["samples_per_s"], t["images"]["samples_per_s"]
    print(f"\nResNet example, 2 ranks: .npy {a:.1f} samples/s, ImageFolder {b:.1f} "
          f"({b / a:.2f} of .npy); data-wait share npy {t['npy']['data_wait_share']}, "
          f"ImageFolder {t['images']['data_wait_share']}")
PY
