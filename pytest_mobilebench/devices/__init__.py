"""Devices: the Android adapter on adbutils (:mod:`.android`), the pool with leases and file locks
(:mod:`.pool`), emulators the harness starts (:mod:`.emulator`), and the iOS (:mod:`.ios`) and HarmonyOS
(:mod:`.harmony`) command builders and failure mappings. Documented in ``docs/device-repair.md``.
"""
