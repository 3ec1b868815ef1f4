"""Whether an answer covers a key point in its own words: content-word overlap with lemmas and synonyms.

A recap's point is phrased the way a person summarizes ("moved to Denver", "Noah's housewarming"); a
good answer says it in other words ("relocated to Denver", "went to Noah's housewarming party"). A point
is covered when more than half of its content words (lemmatized, synonyms folded to one word) are in the
answer and its head, the longest content word (usually the name: Denver, not "moved"), is one of them:
"moved to Austin" does not cover "moved to Denver". Chinese has no spaces: a point is cut into the
words of a small vocabulary (synonyms folded first) and the runs between them, filler dropped.

A point's words the question already says are not counted: "got the churn analysis done", asked "recap
the churn analysis", is covered by "it shipped", not by an answer that repeats the project's name.
"""

from __future__ import annotations

import re

from keme.text.normalize import norm_text

# ---------------------------------------------------------------- English
STOPWORDS = frozenset(
    """a an the to of at in on for with and or my me i you your was were is are be been had have has got
    get went go going gone did do does it its this that there their them they some about from by as up
    out over into new""".split()
)

# every word of a group is read as its first
SYNONYMS_EN: tuple[tuple[str, ...], ...] = (
    ("move", "relocate", "relocation", "moving"),
    ("trip", "travel", "vacation", "visit", "holiday", "getaway", "journey"),
    ("start", "begin", "began", "begun", "join", "took", "take", "pick"),
    ("job", "work", "position", "role", "employer", "company"),
    ("doctor", "physician", "gp", "clinic", "er", "hospital", "urgent"),
    ("sick", "ill", "unwell", "illness", "bout", "suffer", "deal", "dealt"),
    ("date", "dating", "seeing", "partner", "relationship", "boyfriend", "girlfriend"),
    ("adopt", "adopted", "rescue"),
    ("birthday", "bday"),
    ("party", "celebration", "celebrate", "dinner", "gathering"),
    ("project", "initiative", "launch", "campaign"),
    ("learn", "study", "studying", "lesson", "class", "course"),
    ("become", "became", "promote", "promotion"),
    (
        "finish",
        "finished",
        "done",
        "ship",
        "shipped",
        "deliver",
        "complete",
        "completed",
        "wrap",
        "wrapped",
        "live",
        "land",
        "release",
        "released",
    ),
    ("buy", "bought", "purchase", "purchased", "order", "ordered", "grab", "grabbed", "caved"),
    ("pay", "paid", "cost", "spent", "spend", "ran"),
)


def _lemma(word: str) -> str:
    """A crude English lemma: possessives, plurals and the common verb endings off."""
    word = word.removesuffix("'s").removesuffix("’s")
    for suffix, repl in (("ies", "y"), ("ied", "y"), ("ing", ""), ("ed", ""), ("es", ""), ("s", "")):
        if word.endswith(suffix) and len(word) - len(suffix) >= 3:
            return word[: -len(suffix)] + repl
    return word


_CANON_EN = {_lemma(w): group[0] for group in SYNONYMS_EN for w in group}


def _words_en(text: str) -> list[str]:
    words = re.findall(r"[a-z0-9]+(?:['’][a-z]+)?", text.casefold())
    lemmas = [_lemma(w) for w in words if w not in STOPWORDS]
    return [_CANON_EN.get(w, w) for w in lemmas if w and w not in STOPWORDS]


# ---------------------------------------------------------------- Chinese
SYNONYMS_ZH: tuple[tuple[str, ...], ...] = (
    ("搬到", "搬家到", "搬去", "搬来", "搬家去", "搬家", "搬到了"),
    ("旅行", "旅游", "出游", "度假", "玩了", "游玩", "出去玩"),
    ("入职", "加入", "跳槽到", "跳槽去", "换工作到", "新工作"),
    ("当上", "升为", "升职为", "升到", "成为", "升职"),
    ("在一起", "谈恋爱", "恋爱", "交往", "脱单"),
    ("养了", "领养", "收养", "养了只", "养了一只"),
    ("开始学", "在学", "学习", "报了"),
    ("开始", "改成", "改为", "换成"),
    ("迷上了", "喜欢上", "爱上了", "开始练", "开始玩"),
    ("项目", "专项", "工作"),
    ("有段时间", "那阵子", "前阵子", "一阵子", "得了", "犯了"),
    ("做完", "完成", "干完", "搞定", "上线", "交付", "交了", "收尾", "落地", "弄完"),
    ("买了", "买", "下单", "入手", "拿下", "购买", "剁手"),
    ("花了", "花", "付了", "掏了", "一共"),
)
FILLER_ZH = (
    "的",
    "了",
    "去",
    "我",
    "在",
    "和",
    "一起",
    "跟",
    "一下",
    "一趟",
    "一次",
    "这个",
    "那个",
    "还",
    "也",
    "有",
)

_CANON_ZH = sorted(((w, g[0]) for g in SYNONYMS_ZH for w in g), key=lambda p: -len(p[0]))
_VOCAB_ZH = sorted({g[0] for g in SYNONYMS_ZH}, key=lambda w: (-len(w), w))


def _fold_zh(text: str) -> str:
    """Every synonym replaced by its group's first word, longest first."""
    out, i = [], 0
    while i < len(text):
        for word, canon in _CANON_ZH:
            if text.startswith(word, i):
                out.append(canon)
                i += len(word)
                break
        else:
            out.append(text[i])
            i += 1
    return "".join(out)


def _words_zh(text: str) -> list[str]:
    """The vocabulary's words and the runs between them, filler dropped."""
    folded = _fold_zh(text)
    pattern = "|".join(re.escape(w) for w in _VOCAB_ZH)
    units: list[str] = []
    for part in re.split(f"({pattern})", folded):
        if not part:
            continue
        if part in _VOCAB_ZH:
            units.append(part)
            continue
        for run in re.split("|".join(re.escape(f) for f in FILLER_ZH) + r"|[\s，,。；;、（）()]", part):
            if run:
                units.append(run)
    return units


def _zh(text: str) -> bool:
    return bool(re.search(r"[\u4e00-\u9fff]", text))


# ---------------------------------------------------------------- coverage
def content_words(point: str) -> list[str]:
    """The point's content words, lemmatized and with synonyms folded (units for Chinese)."""
    return _words_zh(point) if _zh(point) else _words_en(point)


def covers(answer: str, point: str, asked: str = "") -> bool:
    """Whether `answer` says `point`, in its words or in others, counting only the words the question
    `asked` does not already say (see the module docstring)."""
    answer, point = _plain_numbers(answer), _plain_numbers(point)
    if norm_text(point) and norm_text(point) in norm_text(answer):
        return True
    words = list(dict.fromkeys(content_words(point)))
    words = [w for w in words if not _in_question(w, asked, _zh(point))] or words
    if not words:
        return False
    if _zh(point):
        folded = _fold_zh(answer)
        present = [w for w in words if _present_zh(w, folded)]
        plain = [w for w in words if w not in _VOCAB_ZH]
    else:
        said = set(_words_en(answer))
        present = [w for w in words if w in said]
        plain = [w for w in words if w not in _CANON_EN.values()]
    head = max(plain or words, key=len)  # the name the point is about, not the verb around it
    return head in present and len(present) * 2 >= len(words)


def _plain_numbers(text: str) -> str:
    """Thousands written without their separators: "$1,299" and "1299 bucks" are one number."""
    return re.sub(r"(?<=\d),(?=\d{3}(?!\d))", "", text)


def _present_zh(unit: str, folded: str) -> bool:
    """A unit said in the answer, or a long one mostly (two thirds of its character pairs):
    会员积分体系优化 in 会员积分体系的优化."""
    if unit in folded:
        return True
    if len(unit) < 4:
        return False
    pairs = [unit[i : i + 2] for i in range(len(unit) - 1)]
    return sum(p in folded for p in pairs) * 3 >= 2 * len(pairs)


def _in_question(word: str, asked: str, zh: bool) -> bool:
    """Whether the question already says `word` (a unit of a Chinese point, Latin ones too): it tells
    nothing of memory."""
    if not asked:
        return False
    return word.casefold() in _fold_zh(asked).casefold() if zh else word in _words_en(asked)


def covered(answer: str, points: list[str], asked: str = "") -> list[str]:
    """The points `answer` covers, asked `asked`."""
    return [p for p in points if covers(answer, p, asked)]
