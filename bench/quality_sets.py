"""Small hand-made sets every mode must answer in full (MRR@10 1.0).

English notes whose questions need a word's other forms (deploy, Deploys,
deployed), and Korean, Japanese and Chinese notes whose questions carry
particles, endings and compounds; plus CJK questions in other words or
another language, answered by meaning only (semantic and hybrid).
"""

from __future__ import annotations

ENGLISH_NOTES = {
    "wiki__ops__release.md": "# Release day\n\nDeploys happen on Tuesday; the release is "
                             "deployed by the on-call engineer.\n",
    "wiki__ops__web.md": "# Web service\n\nHow to deploy the web service.\n",
    "wiki__billing__refunds.md": "# Refunds\n\nCustomers ask for refunds by mail.\n",
    "wiki__pets__cat.md": "# Pets\n\nThe cat sleeps on the sofa all afternoon.\n",
    "wiki__ops__oncall.md": "# On-call\n\nThe engineer on call answers pages and "
                            "restarts crashed services.\n",
}
ENGLISH_QUERIES = [
    ("deploys", "wiki/ops/release.md"),
    ("deployed release", "wiki/ops/release.md"),
    ("deploy tuesday", "wiki/ops/release.md"),
    ("deploy", "wiki/ops/web.md"),
    ("refund", "wiki/billing/refunds.md"),
    ("refunding customers", "wiki/billing/refunds.md"),
    ("sleeping cats", "wiki/pets/cat.md"),
    ("restarting a crashed service", "wiki/ops/oncall.md"),
]

CJK_NOTES = {
    "ko__deploy.md": "# 배포 절차\n\n서버에 배포하기 전에 데이터베이스를 백업한다. 배포가 실패하면 이전 버전으로 "
                     "되돌린다.\n",
    "ko__migration.md": "# 마이그레이션\n\n스키마를 변경할 때는 마이그레이션 파일을 만들고, 문제가 생기면 "
                        "다운그레이드 명령으로 되돌린다.\n",
    "ko__meeting.md": "# 회의록\n\n매주 월요일 오전에 팀 회의를 한다. 회의에서는 지난주 진행 상황을 공유한다.\n",
    "ko__coffee.md": "# 커피\n\n사무실 커피머신은 3층 휴게실에 있다. 원두는 금요일마다 주문한다.\n",
    "ko__vacation.md": "# 휴가 신청\n\n휴가는 최소 2주 전에 인사팀에 신청서를 제출해야 한다.\n",
    "ko__security.md": "# 보안 규칙\n\n비밀번호는 90일마다 변경하고, 공용 컴퓨터에 저장하지 않는다.\n",
    "ja__tokyo.md": "# 東京出張\n\n来月、東京の本社に出張します。新幹線で移動し、品川のホテルに泊まります。\n",
    "ja__backup.md": "# バックアップ\n\n毎晩サーバーのバックアップを取ります。復元手順は運用手順書にあります。\n",
    "ja__cherry.md": "# 花見\n\n四月に上野公園で花見をしました。桜がとてもきれいでした。\n",
    "ja__api.md": "# API設計\n\nREST APIのエンドポイントは名詞で命名し、バージョン番号をURLに含めます。\n",
    "ja__cache.md": "# キャッシュ\n\nキャッシュの有効期限は五分です。設定を変更したらキャッシュを消去してください。\n",
    "zh__deploy.md": "# 部署流程\n\n我们在周四部署新版本。部署之前必须通过所有自动化测试。\n",
    "zh__lunch.md": "# 午餐\n\n公司食堂中午十二点开门，周五有火锅。\n",
    "zh__logging.md": "# 日志\n\n生产环境的日志保存三十天，错误日志会发送到监控系统。\n",
    "zh__hiring.md": "# 招聘\n\n面试分为三轮：技术面试、团队面试和人事面试。\n",
    "zh__database.md": "# 数据库\n\n主数据库每天凌晨自动备份，备份文件保存在对象存储中。\n",
}
CJK_QUERIES = [
    ("배포가 실패하면 어떻게 하나요", "ko/deploy.md"),
    ("서버에 배포하기 전에 무엇을 하나요", "ko/deploy.md"),
    ("마이그레이션을 되돌리는 방법", "ko/migration.md"),
    ("스키마 변경은 어떻게 하나요", "ko/migration.md"),
    ("팀 회의는 언제 하나요", "ko/meeting.md"),
    ("커피머신은 어디에 있나요", "ko/coffee.md"),
    ("원두 주문", "ko/coffee.md"),
    ("휴가를 신청하려면", "ko/vacation.md"),
    ("비밀번호를 얼마나 자주 바꿔야 하나요", "ko/security.md"),
    ("東京への出張はいつですか", "ja/tokyo.md"),
    ("品川のホテル", "ja/tokyo.md"),
    ("バックアップの復元方法", "ja/backup.md"),
    ("サーバーのバックアップはいつ取りますか", "ja/backup.md"),
    ("上野で桜を見ました", "ja/cherry.md"),
    ("APIのバージョン番号", "ja/api.md"),
    ("キャッシュを消去する", "ja/cache.md"),
    ("我们什么时候部署新版本", "zh/deploy.md"),
    ("部署之前要做什么", "zh/deploy.md"),
    ("食堂几点开门", "zh/lunch.md"),
    ("日志保存多久", "zh/logging.md"),
    ("面试有几轮", "zh/hiring.md"),
    ("数据库怎么备份", "zh/database.md"),
    ("错误日志发送到哪里", "zh/logging.md"),
]
#: Questions in other words or another language than the note (meaning only).
CJK_PARAPHRASES = [
    ("점심 메뉴", "zh/lunch.md"),
    ("database backup schedule", "zh/database.md"),
    ("how many interview rounds", "zh/hiring.md"),
    ("password rotation policy", "ko/security.md"),
    ("business trip hotel", "ja/tokyo.md"),
    ("休暇の申請", "ko/vacation.md"),
    ("咖啡机在哪里", "ko/coffee.md"),
    ("release testing before shipping", "zh/deploy.md"),
]
