"""The keyword lexicon that turns words into fact keys, shared by distillation and retrieval.

Two maps, English regex fragments (matched on casefolded text) and Chinese substrings:

- ATTRIBUTES: persona attribute key (the dataset's persona dimensions, e.g. "career.company") -> the
  words that name it. A user statement that names an attribute is filed under its key; a question
  naming it looks the key up. One text may name several attributes and gets all their keys. Where the
  dataset has two attributes of one concept (pets.pet_name / pet_species, social_circle.sibling /
  sibling_relation) the lexicon files both under the first: words cannot tell them apart.
- APP_KINDS / APP_WORDS: app names (as apps report them, both languages) -> the record kind used in
  dated keys ("bill:2026-03-04"), and the query words that ask about that kind (pay/付/花 -> bill).

The word lists are a choice, not data-derived: broad enough to catch ordinary phrasings, narrow enough
that most chit-chat matches nothing. The seed has no lexicon (its facts arrive with explicit keys).
"""

from __future__ import annotations

import hashlib
import json
import re

Words = tuple[tuple[str, ...], tuple[str, ...]]  # (English regex fragments, Chinese substrings)

ATTRIBUTES: dict[str, Words] = {
    "basic_info.age": (
        (r"\d+ years? old", r"\bmy age\b", r"\bturn(?:ed|ing)? \d+\b", r"\bhow old\b"),
        ("岁",),
    ),
    "basic_info.hometown": (
        (r"\bhometown\b", r"\bgrew up\b", r"\bborn in\b", r"\boriginally from\b"),
        ("老家", "家乡", "出生在", "从小长大"),
    ),
    "home.city": (
        (r"\bliv(?:e|es|ed|ing) (?:in|near|downtown)\b", r"\bmov(?:e|ed|ing) (?:to|into)\b", r"\brelocat\w*"),
        ("住在", "搬", "定居", "生活在"),
    ),
    "home.neighborhood": ((r"\bneighbou?rhoods?\b",), ("小区", "街区", "片区")),
    "career.company": (
        (r"\bwork(?:s|ed|ing)?\b(?! ?out)", r"\bjobs?\b", r"\bcompany\b", r"\bemployer\b", r"\boffice\b"),
        ("公司", "上班", "工作", "单位", "入职", "跳槽"),
    ),
    "career.job_title": (
        (r"\bjob title\b", r"\bposition\b", r"\bpromot\w*", r"\bmy role\b"),
        ("职位", "岗位", "升职", "职称"),
    ),
    "diet.diet_type": (
        (
            r"\bdiet\b",
            r"\bvegan\b",
            r"\bvegetarian\b",
            r"\bketo\b",
            r"\bpaleo\b",
            r"\bpescatarian\b",
            r"\bgluten[- ]free\b",
        ),
        ("饮食", "吃素", "素食", "减脂", "戒糖", "轻食"),
    ),
    "diet.favorite_cuisine": (
        (r"\bcuisine\b", r"\bfavou?rite food\b"),
        ("菜系", "最爱吃", "最喜欢吃", "口味"),
    ),
    "health.allergy": ((r"\ballerg\w*",), ("过敏",)),
    "health.sleep_habit": (
        (r"\bsleep\w*", r"\binsomnia\b", r"\bnight owl\b", r"\bearly riser\b"),
        ("睡眠", "失眠", "睡觉", "熬夜", "早起"),
    ),
    "sport.main_sport": (
        (
            r"\bsports?\b",
            r"\bsoccer\b",
            r"\bbasketball\b",
            r"\btennis\b",
            r"\bswim\w*",
            r"\bclimb\w*",
            r"\brunning\b",
            r"\byoga\b",
            r"\bcycling\b",
            r"\bhiking\b",
            r"\bbadminton\b",
        ),
        ("运动", "跑步", "游泳", "攀岩", "羽毛球", "篮球", "足球", "瑜伽", "骑行"),
    ),
    "sport.gym": ((r"\bgym\b",), ("健身房", "健身")),
    "shopping.favorite_platform": (
        (r"\bordered\b", r"\bonline shopping\b", r"\bshop(?:ping)? (?:on|at)\b"),
        ("淘宝", "京东", "拼多多", "网购", "下单"),
    ),
    "transport.commute_mode": (
        (
            r"\bcommut\w*",
            r"\bsubway\b",
            r"\bmetro\b",
            r"\bbus\b",
            r"\blight rail\b",
            r"\btrain to work\b",
            r"\bbike to work\b",
            r"\bdrive to work\b",
        ),
        ("通勤", "地铁", "公交", "骑车上班", "开车上班"),
    ),
    "travel.dream_destination": (
        (r"\bdream trip\b", r"\bdream destination\b", r"\bbucket list\b", r"\bsomeday\b"),
        ("梦想", "一直想去", "最想去"),
    ),
    "travel.seat_preference": (
        (r"\bwindow seats?\b", r"\baisle seats?\b", r"\bseats?\b"),
        ("靠窗", "靠过道", "座位"),
    ),
    "tech.phone": ((r"\bphones?\b", r"\biphone\b", r"\bpixel\b", r"\bgalaxy\b", r"\boneplus\b"), ("手机",)),
    "tech.laptop": ((r"\blaptops?\b", r"\bmacbook\b", r"\bthinkpad\b"), ("笔记本电脑", "电脑")),
    "entertainment.favorite_show": (
        (r"\bshows?\b", r"\bseries\b", r"\bbinge\w*", r"\bepisodes?\b"),
        ("追剧", "剧", "综艺"),
    ),
    "entertainment.music_genre": (
        (r"\bmusic\b", r"\bplaylists?\b", r"\bconcerts?\b", r"\bsongs?\b"),
        ("音乐", "歌", "演出", "演唱会"),
    ),
    "finance.bank": ((r"\bbank\b",), ("银行",)),
    "finance.monthly_budget": ((r"\bbudget\w*",), ("预算",)),
    "finance.savings_goal": (
        (r"\bsavings\b", r"\bsav(?:e|ing) (?:up )?(?:for\b|\$?\d)"),
        ("存钱", "攒钱", "存款", "储蓄"),
    ),
    "social_circle.best_friend": (
        (r"\bbest friend\b", r"\bbestie\b", r"\bclosest friend\b"),
        ("闺蜜", "最好的朋友", "好朋友", "发小", "哥们"),
    ),
    "social_circle.sibling": (
        (r"\bbrothers?\b", r"\bsisters?\b", r"\bsiblings?\b"),
        ("哥哥", "姐姐", "弟弟", "妹妹", "堂弟", "堂哥", "堂姐", "堂妹", "表弟", "表哥", "表姐", "表妹"),
    ),
    "social_circle.partner": (
        (
            r"\bgirlfriend\b",
            r"\bboyfriend\b",
            r"\bpartner\b",
            r"\bwife\b",
            r"\bhusband\b",
            r"\bfianc[eé]e?\b",
            r"\bdating\b",
        ),
        ("女朋友", "男朋友", "对象", "老公", "老婆", "恋爱"),
    ),
    "pets.pet_name": (
        (r"\bpets?\b", r"\bdogs?\b", r"\bcats?\b", r"\bpupp(?:y|ies)\b", r"\bkittens?\b"),
        ("宠物", "猫", "狗"),
    ),
    "learning.current_course": (
        (r"\bcourses?\b", r"\bclass(?:es)?\b", r"\blessons?\b", r"\bworkshop\b"),
        ("课程", "上课", "报了", "学习"),
    ),
}

APP_KINDS: dict[str, str] = {
    "wallet": "bill",
    "钱包": "bill",
    "alipay": "bill",
    "支付宝": "bill",
    "微信支付": "bill",
    "calendar": "calendar",
    "日历": "calendar",
    "notes": "note",
    "备忘录": "note",
    "reminders": "todo",
    "待办": "todo",
    "提醒事项": "todo",
    "files": "document",
    "文件": "document",
    "screenshots": "screen",
    "截屏": "screen",
    "voice memos": "voice_memo",
    "录音机": "voice_memo",
}

APP_WORDS: dict[str, Words] = {
    "bill": (
        (
            r"\bpa(?:y|id|ying|yment)s?\b",
            r"\bsp[e]nd\w*",
            r"\bspent\b",
            r"\bcost\w*",
            r"\bbills?\b",
            r"\bcharged?\b",
            r"\bbought\b",
            r"\bpurchas\w*",
        ),
        ("付", "花", "支出", "账单", "消费", "买"),
    ),
    "calendar": (
        (r"\bcalendar\b", r"\bschedul\w*", r"\bappointments?\b", r"\bmeetings?\b", r"\bevents?\b"),
        ("日程", "日历", "预约", "会议"),
    ),
    "todo": ((r"\bto-?dos?\b", r"\breminders?\b", r"\btasks?\b", r"\bdue\b"), ("待办", "提醒", "截止")),
    "note": ((r"\bnotes?\b",), ("备忘录", "笔记")),
    "document": ((r"\bdocuments?\b", r"\bfiles?\b", r"\bpdf\b"), ("文件", "文档")),
    "screen": ((r"\bscreenshots?\b", r"\bscreen\b"), ("截屏", "截图")),
    "voice_memo": ((r"\brecordings?\b", r"\bvoice memos?\b", r"\bmemos?\b"), ("录音",)),
}

SAID = "said"  # dated key kind for user statements no attribute word names (see distill.py)

_FIRST_PERSON = re.compile(r"\b(?:i|i'm|i've|i'd|i'll|me|my|mine|myself|we|our|us)\b")
_ZH_QUESTION_END = re.compile(r"[吗呢么][\s。！!～~…]*$")


def _compile(table: dict[str, Words]) -> dict[str, tuple[re.Pattern[str] | None, tuple[str, ...]]]:
    return {
        key: (re.compile("|".join(f"(?:{w})" for w in en)) if en else None, zh)
        for key, (en, zh) in table.items()
    }


_ATTRIBUTES = _compile(ATTRIBUTES)
_APP_WORDS = _compile(APP_WORDS)


def _named(table: dict[str, tuple[re.Pattern[str] | None, tuple[str, ...]]], text: str) -> list[str]:
    lowered = text.casefold().replace("\u2019", "'")
    return [
        key
        for key, (en, zh) in table.items()
        if (en is not None and en.search(lowered)) or any(word in text for word in zh)
    ]


def attribute_keys(text: str) -> list[str]:
    """Persona attribute keys whose words occur in `text`, in lexicon order."""
    return _named(_ATTRIBUTES, text)


def app_kinds_named(text: str) -> list[str]:
    """Record kinds a question asks about (pay/付/花 -> bill, calendar/日程 -> calendar, ...)."""
    return _named(_APP_WORDS, text)


def app_kind(app: str) -> str:
    """The record kind of an app; an unknown app is its own kind (its name, casefolded, spaces as '_')."""
    name = app.strip().casefold()
    return APP_KINDS.get(name) or re.sub(r"[\s:]+", "_", name)


def is_question(text: str) -> bool:
    stripped = text.strip()
    return "?" in stripped or "？" in stripped or _ZH_QUESTION_END.search(stripped) is not None


def is_first_person(text: str) -> bool:
    return "我" in text or _FIRST_PERSON.search(text.casefold().replace("\u2019", "'")) is not None


def fingerprint() -> str:
    """Changes whenever a word list changes (part of the system's config fingerprint)."""
    blob = json.dumps([ATTRIBUTES, APP_KINDS, APP_WORDS, SAID], sort_keys=True, ensure_ascii=False)
    return hashlib.sha256(blob.encode("utf-8")).hexdigest()[:12]
