"""One realistic sample screen per template and language, for previews and template tests."""

from __future__ import annotations

from keme.omni import images
from keme.omni.screens import (
    BillScreen,
    CalendarEvent,
    CalendarScreen,
    ChatLine,
    ChatScreen,
    Comment,
    EbookPage,
    MusicPlayer,
    NoteScreen,
    OrderItem,
    PaymentTransfer,
    ShoppingOrder,
    SocialPost,
    TrainTicket,
    VideoPage,
    _Screen,
)


def _chat(lang: str, group: bool) -> ChatScreen:
    if lang == "zh":
        people = ["王芳", "李明", "陈静"]
        texts = [
            "周六下午三点在老地方见？",
            "可以，我带上相机",
            "记得订位，上次排了四十分钟",
            "已经订好了，靠窗的位置",
        ]
        title = "周末聚会群" if group else "王芳"
    else:
        people = ["Maya Patel", "Jonas Weber", "Chloe Martin"]
        texts = [
            "Still on for Saturday at 3?",
            "Yes! I'll bring the camera",
            "Book a table, last time we waited 40 min",
            "Done, window seat at Luca's",
        ]
        title = "Weekend crew" if group else "Maya Patel"
    lines = []
    for i, text in enumerate(texts):
        me = i % 2 == 1
        sender = (
            "我"
            if (me and lang == "zh")
            else ("Me" if me else people[(i // 2) % (len(people) if group else 1)])
        )
        lines.append(
            ChatLine(
                sender=sender, avatar=images.avatar(sender), text=text, time=f"14:{10 + i * 3:02d}", me=me
            )
        )
    return ChatScreen(
        lang=lang, clock="14:25", title=title, group=group, members=3 if group else 2, lines=lines
    )


def sample(template: str, lang: str) -> _Screen:
    zh = lang == "zh"
    if template == "chat_wechat":
        return _chat(lang, group=True)
    if template in ("chat_telegram", "chat_x"):
        return _chat(lang, group=template == "chat_telegram" and not zh)
    if template == "shopping_order":
        items = (
            [("无线降噪耳机 Pro", 1, "¥899.00"), ("硅胶保护套 雾蓝色", 2, "¥29.90")]
            if zh
            else [
                ("Wireless Noise-Cancelling Headphones", 1, "$149.99"),
                ("Silicone Case, Mist Blue", 2, "$9.99"),
            ]
        )
        return ShoppingOrder(
            lang=lang,
            clock="20:41",
            store="声悦数码旗舰店" if zh else "SoundWave Store",
            order_id="4021 8836 1175 2209" if zh else "112-4836611-7520931",
            status="已发货" if zh else "Shipped",
            items=[OrderItem(name=n, quantity=q, price=p, image=images.identicon(n)) for n, q, p in items],
            subtotal="¥958.80" if zh else "$169.97",
            shipping="¥0.00" if zh else "$0.00",
            total="¥958.80" if zh else "$169.97",
            placed="2026-06-12 20:38" if zh else "June 12, 2026",
            delivery="6月15日 送达" if zh else "Arriving Mon, June 15",
            address="上海市徐汇区漕溪北路 88 号" if zh else "221 Maple Ave, Portland, OR 97205",
        )
    if template == "payment_transfer":
        name = "李明" if zh else "Jonas Weber"
        return PaymentTransfer(
            lang=lang,
            clock="19:02",
            direction="sent",
            counterparty=name,
            avatar=images.avatar(name),
            amount="¥268.00" if zh else "$42.50",
            note="周六火锅 AA" if zh else "Saturday ramen 🍜",
            time="2026-06-13 19:01" if zh else "Jun 13, 2026 at 7:01 PM",
            method="余额宝" if zh else "Venmo balance",
            transaction_id="2026061320019384" if zh else "3829104756218",
            status="转账成功" if zh else "Completed",
        )
    if template == "train_ticket":
        return TrainTicket(
            lang=lang,
            clock="07:12",
            train_no="G1234" if zh else "Acela 2151",
            from_station="上海虹桥" if zh else "New York Penn",
            to_station="北京南" if zh else "Boston South",
            date="2026-06-20" if zh else "Sat, Jun 20, 2026",
            depart="08:00" if zh else "8:00 AM",
            arrive="12:28" if zh else "11:42 AM",
            duration="4小时28分" if zh else "3h 42m",
            car="05车" if zh else "Car 5",
            seat="12F号" if zh else "Seat 12F",
            seat_class="二等座" if zh else "Business",
            passenger="张伟" if zh else "Alex Kim",
            price="¥662.00" if zh else "$189.00",
            booking_ref="E839201746" if zh else "7F3K2Q",
            gate="检票口 B12" if zh else "Track 7",
        )
    if template == "music_player":
        return MusicPlayer(
            lang=lang,
            clock="22:18",
            track="夜空中最亮的星" if zh else "Midnight City Lights",
            artist="逃跑计划" if zh else "The Paper Kites",
            album="世界" if zh else "Harbour Songs",
            cover=images.identicon("album" + lang, 300),
            playlist="跑步歌单" if zh else "Evening Run",
            elapsed="1:42",
            length="4:12",
            progress=0.4,
            liked=True,
        )
    if template == "video_page":
        return VideoPage(
            lang=lang,
            clock="21:05",
            title="十分钟学会手冲咖啡" if zh else "Pour-over coffee in 10 minutes",
            channel="咖啡实验室" if zh else "Bean Lab",
            channel_avatar=images.avatar("Bean Lab"),
            thumbnail=images.picture("video" + lang, 390, 220),
            views="12.8万" if zh else "128K views",
            likes="9621" if zh else "9.6K",
            uploaded="2026-05-30" if zh else "2 weeks ago",
            duration="10:24",
            comments=[
                Comment(
                    user="小满" if zh else "ana_r",
                    text="水温92度确实更好喝" if zh else "92°C water made all the difference",
                ),
                Comment(user="阿杰" if zh else "tom.b", text="收藏了" if zh else "Saved for the weekend"),
            ],
        )
    if template == "ebook_page":
        return EbookPage(
            lang=lang,
            clock="23:40",
            book="活着" if zh else "The Remains of the Day",
            author="余华" if zh else "Kazuo Ishiguro",
            chapter="第三章" if zh else "Day Two — Morning",
            text=("我比现在年轻十岁的时候，获得了一个游手好闲的职业，去乡间收集民间歌谣。" * 4)
            if zh
            else (
                "It seems increasingly likely that I really will undertake the expedition that has been "
                "preoccupying my imagination now for some days. " * 4
            ),
            progress="42%",
            page="第 118 页" if zh else "Page 118 of 258",
        )
    if template == "social_post":
        return SocialPost(
            lang=lang,
            clock="18:30",
            author="小鹿同学" if zh else "maya.travels",
            avatar=images.avatar("小鹿" if zh else "Maya Patel"),
            location="杭州·西湖" if zh else "Lisbon, Portugal",
            text="终于打卡了断桥残雪，人超级多但值得！"
            if zh
            else "Golden hour at Miradouro da Senhora do Monte 🌅",
            image=images.picture("post" + lang, 390, 390),
            likes="1,204" if zh else "1,204",
            comments_count="86",
            time="6月14日" if zh else "June 14",
            comments=[Comment(user="阿杰" if zh else "tom.b", text="好美！" if zh else "Stunning!")],
        )
    if template == "calendar":
        events = (
            [
                ("09:30", "项目周会", "三楼会议室"),
                ("12:00", "和李明吃午饭", "云南菜馆"),
                ("19:00", "瑜伽课", "静心瑜伽馆"),
            ]
            if zh
            else [
                ("9:30 AM", "Project sync", "Room 3B"),
                ("12:00 PM", "Lunch with Jonas", "Luca's Trattoria"),
                ("7:00 PM", "Yoga class", "Pulse Studio"),
            ]
        )
        return CalendarScreen(
            lang=lang,
            clock="08:05",
            month="2026年6月" if zh else "June 2026",
            day="16",
            weekday="星期二" if zh else "Tuesday",
            events=[CalendarEvent(time=t, title=ti, location=lo) for t, ti, lo in events],
        )
    if template == "bill":
        return BillScreen(
            lang=lang,
            clock="12:44",
            merchant="盒马鲜生" if zh else "Whole Foods Market",
            amount="-¥86.50" if zh else "-$64.20",
            category="餐饮美食" if zh else "Groceries",
            method="招商银行信用卡(8842)" if zh else "Visa •••• 8842",
            time="2026-06-16 12:43" if zh else "Jun 16, 2026, 12:43 PM",
            transaction_id="2026061622001488" if zh else "TXN-7741-2290",
            status="交易成功" if zh else "Completed",
        )
    if template == "note":
        return NoteScreen(
            lang=lang,
            clock="21:50",
            title="搬家清单" if zh else "Moving checklist",
            edited="6月16日 21:48" if zh else "June 16, 2026 at 9:48 PM",
            folder="备忘录" if zh else "Notes",
            lines=(
                ["联系搬家公司（周五前）", "退宽带", "买纸箱 20 个", "新家钥匙找房东拿"]
                if zh
                else [
                    "Call movers (before Friday)",
                    "Cancel internet",
                    "Buy 20 boxes",
                    "Pick up keys from landlord",
                ]
            ),
        )
    raise KeyError(template)
