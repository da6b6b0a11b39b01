#!/usr/bin/env python3
"""Writes bench/liveness-split.json: the fixed dev/eval split of the liveness (PAD) data BY PERSON.

Run once, before any level was tuned (docs/LIVENESS.md, "Data and split"); the JSON it wrote is the
record the bench and the tests read, and it is not to be regenerated to move a person.

Rule: people are grouped by how they were filmed (so both splits see studio, talking-head/TV, MEAD,
GRID and phone/webcam captures); inside a group they are ordered by the SHA-256 of their person id
and alternate eval, dev, eval, … People who may be the same (videoretalking_4 and
edtalk_expression_source; the Zalo live and spoof clips) form one unit. Every clip, replay and print
of a person lands in that person's split. LFW people (held prints only) are split by the same hash
rule; LFW names that are people of the videos (Theresa_May, Joseph_Biden) are left out of LFW.

usage: python3 bench/liveness_split.py ../shared/testdata > bench/liveness-split.json
"""
import hashlib
import json
import os
import sys

data = sys.argv[1] if len(sys.argv) > 1 else "../shared/testdata"
live = os.path.join(data, "liveness")

# Person of every clip outside bona-fide-more (whose manifest names them).
other_clips = {
    "real-face-videos/liveportrait_d0.mp4": "lp_d0",
    "real-face-videos/liveportrait_d3.mp4": "lp_d3",
    "real-face-videos/liveportrait_d9.mp4": "lp_d9",
    "real-face-videos/liveportrait_d10.mp4": "lp_d10",
    "real-face-videos/liveportrait_d12.mp4": "lp_d12",
    "real-face-videos/liveportrait_d18.mp4": "lp_d18",
    "real-face-videos/liveportrait_d20.mp4": "lp_d20",
    "real-face-videos/sadtalker_WDA_AlexandriaOcasioCortez_000.mp4": "aoc",
    "real-face-videos/sadtalker_WDA_KatieHill_000.mp4": "katie_hill",
    "attacks/replay-video/real.mov": "zubair_user",
}
attack_clips = {
    "attacks/replay-video/fake_replay_on_phone.mp4": "zubair_user",
}
stills = {
    "faces/obama.jpg": "obama", "faces/obama2.jpg": "obama", "faces/obama3.jpg": "obama",
    "faces/biden.jpg": "biden",
    "liveness/attacks/stills/image_F1.jpg": "silentface_sample", "liveness/attacks/stills/image_T1.jpg": "silentface_sample",
}

clips = {}
for line in open(os.path.join(live, "bona-fide-more/manifest.jsonl")):
    m = json.loads(line)
    clips["bona-fide-more/" + m["file"]] = m["person"]
clips.update(other_clips)
for line in open(os.path.join(live, "attacks/real-more/manifest.jsonl")):
    m = json.loads(line)
    attack_clips["attacks/real-more/" + m["file"]] = m["person"]

# One unit per person, or per group of people who may be the same.
units = {"vrt_4": "vrt_4+edt_expr", "edt_expr": "vrt_4+edt_expr", "zalo_live_2": "zalo", "zalo_spoof_1": "zalo"}
groups = {
    "studio": ["lp_d5", "lp_d8", "lp_d11", "lp_s18", "lp_s29", "lp_d0", "lp_d3", "lp_d9", "lp_d10", "lp_d12", "lp_d18", "lp_d20"],
    "talking head / TV": ["vrt_4+edt_expr", "vrt_2", "tpsmm_driving", "theresa_may", "edt_mouth", "obama", "dpe_d",
                          "dfdc_lynaeydofd", "ffpp_004", "aoc", "katie_hill"],
    "MEAD": ["mead_M003", "mead_M026", "mead_W023", "mead_W036", "mead_W009"],
    "GRID": ["grid_bbaf2n", "grid_brbk7n", "grid_lbax4n", "grid_lbbc2a", "grid_lwbsza", "grid_sbia1a", "grid_id2"],
    "phone / webcam": ["lestari_user", "tranvanluyt_user", "zalo", "zubair_user", "manikantha_user"],
    "stills": ["biden", "silentface_sample"],
}


def h(name):
    return hashlib.sha256(name.encode()).hexdigest()


unit_split = {}
for group, members in groups.items():
    for i, u in enumerate(sorted(members, key=h)):
        unit_split[u] = "eval" if i % 2 == 0 else "dev"

people = set(clips.values()) | set(attack_clips.values()) | set(stills.values())
person_split = {}
for p in sorted(people):
    u = units.get(p, p)
    if u not in unit_split:
        sys.exit(f"person {p} is in no group")
    person_split[p] = unit_split[u]

lfw_dir = os.path.join(data, "lfw/images")
excluded = {"Theresa_May", "Joseph_Biden"}
lfw = sorted((n for n in os.listdir(lfw_dir) if n not in excluded), key=h)
lfw_split = {"dev": sorted(lfw[1::2]), "eval": sorted(lfw[0::2])}

json.dump({
    "rule": "by person: grouped by capture kind, SHA-256 order of person id inside a group, alternating eval/dev; "
            "LFW people (held prints) by the same hash rule; see bench/liveness_split.py",
    "person_split": person_split,
    "bona_fide_clips": clips,
    "attack_clips": attack_clips,
    "stills": stills,
    "lfw_excluded": sorted(excluded),
    "lfw_split_counts": {k: len(v) for k, v in lfw_split.items()},
    "lfw_dev_first_by_hash": [n for n in lfw if n in set(lfw_split["dev"])][:40],
    "lfw_eval_first_by_hash": [n for n in lfw if n in set(lfw_split["eval"])][:40],
}, sys.stdout, indent=1, sort_keys=True)
print()
