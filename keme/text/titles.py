"""Titles and one-line summaries of events, per language (graph metadata, not dialogue)."""

from __future__ import annotations

from collections import defaultdict

EN: dict[str, tuple[str, str]] = {
    "chapter": ("{month_name}", "Life in {month_name}: {themes}."),
    "trip": (
        "Trip to {destination}",
        "{nights} nights in {destination} with {companion}, {start_date} to {end_date}.",
    ),
    "work_project": (
        "Project: {project}",
        "Pushing the {project} at work to its {deadline} deadline with {colleague}.",
    ),
    "health": ("Dealing with {symptom}", "Coming down with {symptom}; maybe a visit to {clinic}."),
    "fitness": ("Training: {goal}", "A training block aiming to {goal}."),
    "social": ("{occasion} with {person}", "A {occasion} with {person}, probably at {restaurant}."),
    "shopping": ("Buying {product}", "Comparing and buying {product} (around {price})."),
    "cooking": ("Cooking {dish}", "Trying to cook {dish} at home."),
    "entertainment": ("Watching {title}", "Picking up {title} ({genre})."),
    "finance": ("Money check-in", "Reviewing spending against the monthly budget."),
    "learning": ("Study session", "Making progress on a course with {resource}."),
    "family": ("Catching up with {relative}", "A call with {relative}."),
    "weekend": ("Weekend: {activity}", "A free day to {activity} at {place}."),
    "wellbeing": ("Rough patch", "A low-energy day that needs talking through."),
    "tech": ("{device} trouble", "The {device} {issue}."),
    "pet": ("Pet care", "A check-up at {vet_clinic}."),
    "errand": ("{app_name} record", "An app reported a record that needs attention."),
    "job_change": (
        "Job change to {target_company}",
        "Interviewing at and moving to {target_company} as {target_title}.",
    ),
    "promotion": ("Promotion", "A promotion after landing the {project}."),
    "relocate": (
        "Moving to {target_city}",
        "Finding a place in {target_neighborhood}, {target_city}, and moving.",
    ),
    "commute_change": ("New commute", "The commute changes after the latest move or job change."),
    "gym_change": ("New gym", "Finding a new gym."),
    "diet_change": ("Diet change", "Switching to a new way of eating."),
    "new_sport": ("New sport", "Picking up a new sport."),
    "new_phone": ("New phone", "Replacing the phone."),
    "new_show": ("New favourite show", "Getting hooked on {title}."),
    "budget_change": ("New budget", "Resetting the monthly budget."),
    "savings_goal": ("Savings goal", "Setting a new savings goal."),
    "relationship": ("Dating", "Starting to see someone."),
    "adopt_pet": ("Adopting a pet", "Bringing a pet home."),
    "new_course": ("New course", "Starting a new course."),
}

ZH: dict[str, tuple[str, str]] = {
    "chapter": ("{month_name}", "{month_name}的生活：{themes}。"),
    "trip": ("{destination}之旅", "和{companion}去{destination}玩{nights}晚，{start_date}到{end_date}。"),
    "work_project": ("项目：{project}", "和{colleague}一起推进{project}，{deadline}截止。"),
    "health": ("身体不适：{symptom}", "出现{symptom}，可能要去{clinic}看看。"),
    "fitness": ("训练：{goal}", "一段以“{goal}”为目标的训练。"),
    "social": ("和{person}的{occasion}", "和{person}的{occasion}，可能在{restaurant}。"),
    "shopping": ("买{product}", "比较并购买{product}（约{price}）。"),
    "cooking": ("做{dish}", "在家尝试做{dish}。"),
    "entertainment": ("追《{title}》", "开始看《{title}》（{genre}）。"),
    "finance": ("月度记账", "对照月预算复盘开销。"),
    "learning": ("学习打卡", "用{resource}推进课程。"),
    "family": ("和{relative}通话", "和{relative}聊聊近况。"),
    "weekend": ("周末：{activity}", "空闲的一天，去{place}{activity}。"),
    "wellbeing": ("情绪低落", "状态不好的一天，想找人聊聊。"),
    "tech": ("{device}出问题", "{device}{issue}。"),
    "pet": ("宠物护理", "去{vet_clinic}做检查。"),
    "errand": ("{app_name}记录", "应用上报了一条需要处理的记录。"),
    "job_change": ("跳槽到{target_company}", "面试并入职{target_company}，担任{target_title}。"),
    "promotion": ("升职", "{project}落地后升职。"),
    "relocate": ("搬到{target_city}", "在{target_city}{target_neighborhood}找房并搬家。"),
    "commute_change": ("通勤变化", "搬家或换工作后通勤方式改变。"),
    "gym_change": ("换健身房", "找一家新的健身房。"),
    "diet_change": ("饮食调整", "换一种饮食方式。"),
    "new_sport": ("新运动", "开始一项新运动。"),
    "new_phone": ("换手机", "换一部新手机。"),
    "new_show": ("新追的剧", "迷上了《{title}》。"),
    "budget_change": ("调整预算", "重新设定每月预算。"),
    "savings_goal": ("存钱目标", "定一个新的存钱目标。"),
    "relationship": ("恋爱", "开始和某人约会。"),
    "adopt_pet": ("领养宠物", "把宠物接回家。"),
    "new_course": ("新课程", "开始学一门新课。"),
}

MOMENT_LABELS = {
    "en": {
        "trip_planning": "planning",
        "trip_packing": "packing",
        "trip_during": "on the trip",
        "trip_recap": "back home",
        "work_deadline": "deadline crunch",
        "work_meeting_prep": "meeting prep",
        "work_win": "wrap-up",
        "job_interview": "interview",
        "job_offer": "offer",
        "first_day": "first days",
        "apartment_hunt": "apartment hunting",
        "moving_day": "moving day",
        "commute_talk": "commute",
        "health_symptom": "symptoms",
        "health_followup": "follow-up",
        "fitness_plan": "plan",
        "fitness_log": "progress",
        "recipe_help": "in the kitchen",
        "restaurant_pick": "choosing a place",
        "gift_idea": "gift hunt",
        "social_recap": "afterwards",
        "purchase_compare": "comparing",
        "purchase_done": "bought",
        "budget_review": "budget review",
        "savings_plan": "savings plan",
        "show_recommend": "picking",
        "show_discuss": "talking it over",
        "learning_session": "study",
        "family_call": "call",
        "pet_adopt": "arrival",
        "pet_care": "care",
        "weekend_plan": "plans",
        "mood_checkin": "check-in",
        "tech_help": "troubleshooting",
        "date_talk": "dating",
    },
    "zh": {
        "trip_planning": "做攻略",
        "trip_packing": "收拾行李",
        "trip_during": "旅途中",
        "trip_recap": "回来后",
        "work_deadline": "赶截止",
        "work_meeting_prep": "准备会议",
        "work_win": "收尾",
        "job_interview": "面试",
        "job_offer": "拿到offer",
        "first_day": "入职头几天",
        "apartment_hunt": "找房",
        "moving_day": "搬家",
        "commute_talk": "通勤",
        "health_symptom": "症状",
        "health_followup": "复诊",
        "fitness_plan": "计划",
        "fitness_log": "打卡",
        "recipe_help": "下厨",
        "restaurant_pick": "选餐厅",
        "gift_idea": "挑礼物",
        "social_recap": "聚完之后",
        "purchase_compare": "比价",
        "purchase_done": "下单",
        "budget_review": "记账复盘",
        "savings_plan": "存钱计划",
        "show_recommend": "挑片",
        "show_discuss": "聊剧",
        "learning_session": "学习",
        "family_call": "通话",
        "pet_adopt": "接回家",
        "pet_care": "照顾",
        "weekend_plan": "安排",
        "mood_checkin": "聊聊",
        "tech_help": "排查",
        "date_talk": "约会",
    },
}

TABLES = {"en": EN, "zh": ZH}


def title_and_summary(kind: str, lang: str, params: dict[str, str]) -> tuple[str, str]:
    title, summary = TABLES[lang][kind]
    values = defaultdict(str, params)
    return title.format_map(values), summary.format_map(values)


def leaf_title(parent_title: str, moment: str, lang: str) -> str:
    label = MOMENT_LABELS[lang].get(moment)
    if label is None:
        return parent_title
    return f"{parent_title}: {label}" if lang == "en" else f"{parent_title}·{label}"
