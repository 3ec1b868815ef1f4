"""Write `presup:` declarations into the pattern banks (keme/text/{en,zh}/patterns_*.yaml, persona.yaml):
derived where a line's words and slots make them obvious, and from the hand-made table below for the rest.
An exchange that already declares one is left alone, so the script can run again after lines are added.

Each rule: (language, where (a regex on the pattern / attribute / change name), a regex on the exchange's
user or assistant line source, the declaration). The first matching rule wins.

    PYTHONPATH=. python scripts/presup_declare.py [--dry-run]
"""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parent.parent / "keme" / "text"
Rule = tuple[str, str, str, dict[str, str]]

ANY: dict[str, str] = {"part": "any"}  # a time word that counts only from the moment of speaking
WAKING: dict[str, str] = {"part": "waking"}  # "tonight", "tomorrow": said in the waking day

RULES: list[Rule] = [
    # --- en: trips (dates from the episode's details)
    ("en", "trip_planning", r"remind me tomorrow to book", {"date": "start_date 2.."}),
    ("en", "trip_packing", r"we leave tomorrow", {"date": "start_date 1..1"}),
    ("en", "trip_planning", r"Too far out for a real forecast", {"date": "start_date 10.."}),
    ("en", "trip_planning|trip_packing", r"\{start_date\}", {"date": "start_date 1.."}),
    ("en", "trip_packing", r"\{part_of_day\}", {"date": "start_date 0.."}),
    ("en", "trip_during", r"check out on \{end_date\}", {"date": "end_date 0.."}),
    ("en", "trip_during", r"tonight|Tonight", {"part": "waking", "date": "end_date 0.."}),
    ("en", "trip_recap", r"past midnight", {"date": "end_date -7..0"}),
    ("en", "trip_recap", r"at home tonight", {"part": "evening", "date": "end_date ..-1"}),
    # --- en: work (the project's deadline; the win after the crunch)
    ("en", "work_deadline", r"until midnight every night", {"date": "deadline 0.."}),
    ("en", "work_deadline", r"tomorrow's problem now", {"part": "evening", "date": "deadline 1.."}),
    ("en", "work_deadline", r"tomorrow|\{deadline\}", {"date": "deadline 1.."}),
    ("en", "work_meeting_prep", r"tomorrow|\{deadline\}", {"date": "deadline 1.."}),
    ("en", "work_win", r"went out on time", {"date": "deadline ..0", "happened": "work_deadline"}),
    ("en", "work_win", r"tonight", {"part": "waking", "happened": "work_deadline"}),
    (
        "en",
        "work_win",
        r"shipped|Shipped|last week|retro next week|\{deadline\}",
        {"happened": "work_deadline"},
    ),
    # --- en: jobs, moving
    ("en", "job_offer|first_day", r"tonight|tomorrow", WAKING),
    ("en", "apartment_hunt", r"Need a place by next month", {"planned": "relocate"}),
    ("en", "apartment_hunt|moving_day", r"tonight|tomorrow", WAKING),
    # --- en: health, fitness, food, social
    # a report on this morning is said once the morning has come, any time of the waking day
    ("en", "health_symptom", r"this morning", WAKING),
    ("en", "health_symptom|health_followup", r"tomorrow|last night|yesterday", ANY),
    ("en", "fitness_plan|fitness_log", r"tomorrow|Thursday|thursday", WAKING),
    ("en", "fitness_log", r"last week|a month ago|next month", {"happened": "fitness_plan"}),
    ("en", "recipe_help", r"tonight", WAKING),
    ("en", "gift_idea", r"a while ago", ANY),
    ("en", "social_recap", r"last night|Last night|ordered", {"happened": "restaurant_pick"}),
    ("en", "social_recap", r"tomorrow", WAKING),
    # --- en: shopping: the item's stage in the session's order
    ("en", "purchase_done", r"box is sitting by the door", {"item": "delivered"}),
    ("en", "purchase_done", r"just got delivered", {"item": "delivered"}),
    ("en", "purchase_done", r"Picked up the", {"item": "delivered"}),
    ("en", "purchase_done", r"^Ordered the", {"item": "ordered"}),
    ("en", "purchase_done", r"Just unboxed|It's here!|Setting it up now|tiny manual", {"item": "unboxed"}),
    (
        "en",
        "purchase_done",
        r"First impressions|already used it|Used it for the first|smaller than it",
        {"item": "in_use"},
    ),
    ("en", "purchase_compare", r"last year's model|next week|a month away|next month|tomorrow", ANY),
    ("en", "purchase_done", r"a month from now", ANY),
    ("en", "budget_review|savings_plan|anchor_bill", r"last month|next month|two years away", ANY),
    # --- en: shows, learning, pets, weekends, moods, tech, dates, notes
    ("en", "show_recommend|learning_session|mood_checkin|anchor_note", r"tonight|Saturday", WAKING),
    ("en", "learning_session", r"from last week", {"happened": "learning_session"}),
    ("en", "learning_session", r"next month|tomorrow", ANY),
    ("en", "pet_adopt", r"tonight|tomorrow|next week", WAKING),  # the adoption is this session's own
    ("en", "pet_care", r"this morning", WAKING),
    ("en", "pet_care", r"yesterday|tomorrow", ANY),
    ("en", "weekend_plan", r"Saturday", ANY),
    ("en", "tech_help", r"ago", ANY),
    ("en", "date_talk", r"meet their friends next week", {"happened": "relationship"}),
    ("en", "date_talk", r"last night|tonight|tomorrow", WAKING),
    ("en", "anchor_note", r"Friday", ANY),
    # --- en: persona reveals and updates
    ("en", "basic_info.age|social_circle.best_friend|relationship", r"last night", {"part": "any"}),
    ("en", "social_circle.best_friend", r"helping me move", {"happened": "relocate"}),
    ("en", "social_circle.best_friend", r"months ago|Sunday", ANY),
    ("en", "travel.dream_destination", r"at midnight", {"part": "night"}),
    ("en", "new_phone", r"arrived and it's so fast", {"item": "delivered"}),
    ("en", "new_phone", r"Setting it up now", {"item": "unboxed"}),
    ("en", "new_phone", r"Finally upgraded|Retired my", {"item": "delivered"}),
    ("en", "relocate", r"moved out of", {"happened": "apartment_hunt"}),
    ("en", "career.company", r"Holiday party", {"months": "11,12"}),
    ("en", "pets.pet_name", r"away next weekend", {"planned": "trip"}),
    ("en", "gym_change|new_course", r"tonight", WAKING),
    (
        "en",
        "home.city|career.company|diet.diet_type|diet.favorite_cuisine|health.allergy|sport.|"
        "shopping.favorite_platform|finance.|social_circle.sibling|job_change|new_sport|budget_change|"
        "savings_goal|relationship|adopt_pet",
        r"Saturday|Sunday|Friday|monday|next month|next year|last month|yesterday|ordered|delivered|ago|"
        r"a week from now",
        ANY,
    ),
    # --- zh: trips
    ("zh", "trip_packing", r"明天", {"date": "start_date 1..1"}),
    ("zh", "trip_planning|trip_packing", r"\{start_date\}", {"date": "start_date 1.."}),
    ("zh", "trip_during", r"明天", {"part": "waking", "date": "end_date 1.."}),
    ("zh", "trip_recap", r"半夜", {"date": "end_date -7..0"}),
    # --- zh: work
    ("zh", "work_deadline|work_meeting_prep", r"今晚|明天|下周|\{deadline\}", {"date": "deadline 1.."}),
    ("zh", "work_meeting_prep", r"那次的问题", {"happened": "work_deadline"}),
    ("zh", "work_win", r"今晚", {"part": "waking", "happened": "work_deadline"}),
    ("zh", "work_win", r"\{deadline\}|按时|上线了", {"happened": "work_deadline"}),
    ("zh", "job_interview|job_offer|first_day", r"今晚|明天|下周", WAKING),
    ("zh", "apartment_hunt", r"下个月到期", {"planned": "relocate"}),
    ("zh", "moving_day", r"凌晨", {"part": "any"}),
    ("zh", "moving_day|commute_talk", r"今晚|明天", WAKING),
    # --- zh: health, fitness, food, social
    ("zh", "health_symptom|health_followup", r"昨天|明天", ANY),
    ("zh", "fitness_plan|fitness_log", r"明天|今晚|周\{", WAKING),
    ("zh", "fitness_log", r"上周", {"happened": "fitness_plan"}),
    ("zh", "recipe_help", r"今晚", WAKING),
    ("zh", "restaurant_pick", r"下周就是", ANY),
    ("zh", "gift_idea", r"下单了", ANY),
    ("zh", "social_recap", r"昨天", {"happened": "restaurant_pick"}),
    ("zh", "social_recap", r"下个月", ANY),
    # --- zh: shopping: the item's stage in the session's order
    ("zh", "purchase_done", r"^最后还是在\{store\}下单了", {"item": "ordered"}),
    ("zh", "purchase_done", r"送到了|到了！！刚拆完箱|东西到手了|从驿站把|终于到手了", {"item": "delivered"}),
    (
        "zh",
        "purchase_done",
        r"^第一次用有什么|^做工还行|^挺好用的|^外观挺满意|^刚试了一下",
        {"item": "in_use"},
    ),
    ("zh", "new_phone", r"新手机到手啦", {"item": "delivered"}),
    ("zh", "new_phone", r"拍照比以前强太多|数据还没导完", {"item": "in_use"}),
    ("zh", "purchase_compare", r"到货|今晚|后天", ANY),
    ("zh", "budget_review|anchor_bill", r"上个月|下个月|下周|周日", ANY),
    # --- zh: shows, learning, pets, weekends, moods, dates, notes
    ("zh", "show_recommend", r"凌晨", ANY),
    ("zh", "show_recommend", r"今晚", WAKING),
    ("zh", "show_discuss", r"昨晚", ANY),
    ("zh", "show_discuss|learning_session|family_call", r"明天|上周|下周|周日", ANY),
    ("zh", "pet_adopt", r"今晚", {"part": "waking"}),
    ("zh", "pet_care", r"昨天|明天|下个月", ANY),
    ("zh", "weekend_plan", r"周六|周五", ANY),
    ("zh", "mood_checkin", r"昨晚", {"part": "any"}),
    ("zh", "mood_checkin", r"明天", WAKING),
    ("zh", "date_talk", r"昨晚|昨天|下周", {"happened": "relationship"}),
    ("zh", "anchor_voice_memo|anchor_note|anchor_document", r"明天|下周|半夜", ANY),
    # --- zh: persona reveals and updates
    (
        "zh",
        "career.job_title|diet.favorite_cuisine|shopping.favorite_platform|finance.bank",
        r"上周|今晚|下单了|到货",
        ANY,
    ),
    ("zh", "social_circle.best_friend|social_circle.sibling", r"下周|下个月", ANY),
    ("zh", "relationship", r"昨天", ANY),
    ("zh", "adopt_pet", r"明天", WAKING),
]


def _matches(rule: Rule, lang: str, where: str, sources: tuple[str, str]) -> bool:
    rlang, rwhere, rtext, _ = rule
    return (
        rlang == lang and re.search(rwhere, where) is not None and any(re.search(rtext, s) for s in sources)
    )


def declaration(lang: str, where: str, u: str, a: str) -> dict[str, str] | None:
    """The declaration of the first rule matching the exchange, or None (an empty rule means: skip)."""
    for rule in RULES:
        if _matches(rule, lang, where, (u, a)):
            return rule[3] or None
    return None


def _flow(decl: dict[str, str]) -> str:
    return "{" + ", ".join(f"{k}: {json.dumps(v, ensure_ascii=False)}" for k, v in decl.items()) + "}"


def annotate(path: Path, lang: str) -> int:
    """Insert declarations into one YAML file in place, keeping its text; the count inserted."""
    lines = path.read_text(encoding="utf-8").split("\n")
    out, added, where = [], 0, ""
    i = 0
    while i < len(lines):
        line = lines[i]
        top = re.match(r"^([A-Za-z_][\w.]*):\s*$", line)
        key = re.match(r"^\s{2,4}([a-z_]+(?:\.[a-z_]+)?):\s*$", line)
        if top:
            where = top.group(1)
        elif key and not line.strip().startswith(("beats", "options", "reveal", "update", "values", "fits")):
            where = key.group(1)
        out.append(line)
        ustart = re.match(r"^(\s*)- u: (.*)$", line)
        if ustart is None:
            i += 1
            continue
        indent = ustart.group(1) + "  "
        u = yaml.safe_load("u: " + ustart.group(2))["u"]
        j = i + 1
        block = []
        while j < len(lines) and lines[j].startswith(indent) and not lines[j].lstrip().startswith("- "):
            block.append(lines[j])
            j += 1
        a_line = next((b for b in block if b.lstrip().startswith("a:")), "a: ''")
        a = yaml.safe_load(a_line.strip())["a"] or ""
        out.extend(block)
        if not any(b.lstrip().startswith("presup:") for b in block):
            decl = declaration(lang, where, str(u), str(a))
            if decl:
                out.append(f"{indent}presup: {_flow(decl)}")
                added += 1
        i = j
    if added:
        path.write_text("\n".join(out), encoding="utf-8")
    return added


def main(argv: list[str]) -> None:
    for lang in ("en", "zh"):
        for path in sorted((ROOT / lang).glob("patterns_*.yaml")) + [ROOT / lang / "persona.yaml"]:
            if "--dry-run" in argv:
                continue
            print(f"{path.relative_to(ROOT.parent.parent)}: {annotate(path, lang)} declarations added")


if __name__ == "__main__":
    main(sys.argv[1:])
