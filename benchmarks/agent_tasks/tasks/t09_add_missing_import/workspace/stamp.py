def now_iso():
    return datetime.now().isoformat()
