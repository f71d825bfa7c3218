"""Tools of the content apps: files and gallery, notes and reminders, e-mail."""

from __future__ import annotations

from typing import Annotated, Literal

import pydantic

from pytest_mobilebench.suites.planner.declare import tool
from pytest_mobilebench.suites.planner.sandbox import Sandbox, ToolError
from pytest_mobilebench.suites.planner.tools._common import (
    DateTime,
    Id,
    Name,
    Text,
    ids,
    matches,
    parse_dt,
    require_online,
    require_unlocked,
)

Email = Annotated[str, pydantic.Field(pattern=r"^[^@\s]+@[^@\s]+$")]

# ----------------------------------------------------------------------------------------------- files


@tool("files", write=False)
def search_files(
    sb: Sandbox, query: Name, kind: Literal["any", "photo", "video", "document", "audio"] = "any"
) -> list[dict]:
    """Find files, photos and videos in storage and the gallery by name or folder.

    Args:
        query: words of the file name or folder.
        kind: only this kind of file, or any.
    """
    require_unlocked(sb, "files")
    return [
        f for f in sb.rows("files", trashed=0) if matches(query, f["name"], f["folder"]) and kind in ("any", f["kind"])
    ]


@tool("files", write=False)
def list_folder(sb: Sandbox, folder: Name) -> list[dict]:
    """List the files in one folder (Downloads, Camera, Documents, Screenshots ...).

    Args:
        folder: the folder name.
    """
    require_unlocked(sb, "files")
    return sb.rows("files", folder=folder, trashed=0)


@tool("files", write=True)
def rename_file(sb: Sandbox, file_id: Id, new_name: Name) -> dict:
    """Rename a file; refuses a name already used in the same folder.

    Args:
        file_id: the file.
        new_name: the new file name with extension.
    """
    f = sb.get("files", file_id, what="file")
    if sb.rows("files", folder=f["folder"], name=new_name, trashed=0):
        raise ToolError("conflict", f"{f['folder']} already has a file named {new_name!r}")
    return sb.update("files", file_id, name=new_name)


@tool("files", write=True)
def move_file(sb: Sandbox, file_id: Id, folder: Name) -> dict:
    """Move a file to another folder.

    Args:
        file_id: the file.
        folder: destination folder.
    """
    f = sb.get("files", file_id, what="file")
    if sb.rows("files", folder=folder, name=f["name"], trashed=0):
        raise ToolError("conflict", f"{folder} already has a file named {f['name']!r}")
    return sb.update("files", file_id, folder=folder)


@tool("files", write=True)
def trash_file(sb: Sandbox, file_id: Id) -> dict:
    """Move a file or photo to the trash (it can be restored until the trash is emptied).

    Args:
        file_id: the file.
    """
    f = sb.get("files", file_id, what="file")
    if f["trashed"]:
        raise ToolError("invalid_transition", f"{f['name']} is already in the trash")
    return sb.update("files", file_id, trashed=1)


@tool("files", write=True)
def restore_file(sb: Sandbox, file_id: Id) -> dict:
    """Restore a file from the trash.

    Args:
        file_id: the file.
    """
    f = sb.get("files", file_id, what="file")
    if not f["trashed"]:
        raise ToolError("invalid_transition", f"{f['name']} is not in the trash")
    return sb.update("files", file_id, trashed=0)


@tool("files", write=True)
def empty_trash(sb: Sandbox) -> dict:
    """Permanently delete everything in the trash."""
    gone = sb.rows("files", trashed=1)
    for f in gone:
        sb.delete("files", f["id"])
    return {"deleted": [f["name"] for f in gone]}


@tool("files", write=True)
def take_photo(sb: Sandbox, name: Name) -> dict:
    """Take a photo with the camera and save it in the Camera folder.

    Args:
        name: file name for the photo, e.g. receipt.jpg.
    """
    sb.require_on("camera_access", "taking a photo")
    return sb.insert(
        "files",
        {"name": name, "folder": "Camera", "kind": "photo", "size_kb": 2400, "favorite": 0, "trashed": 0},
        prefix="fil",
    )


@tool("files", write=True)
def set_file_favorite(sb: Sandbox, file_id: Id, favorite: bool) -> dict:
    """Mark a photo or file as favourite (heart), or unmark it.

    Args:
        file_id: the file.
        favorite: true to mark, false to unmark.
    """
    sb.get("files", file_id, what="file")
    return sb.update("files", file_id, favorite=favorite)


@tool("files", write=True)
def create_album(sb: Sandbox, name: Name, file_ids: list[Id]) -> dict:
    """Create a photo album in the gallery holding the given photos.

    Args:
        name: album name.
        file_ids: photos to put in it.
    """
    if sb.rows("albums", name=name):
        raise ToolError("conflict", f"an album named {name!r} already exists", "add to it with add_to_album")
    for fid in file_ids:
        sb.get("files", fid, what="file")
    return sb.insert("albums", {"name": name, "file_ids": sorted(set(file_ids))}, prefix="alb")


@tool("files", write=True)
def add_to_album(sb: Sandbox, album_id: Id, file_ids: list[Id]) -> dict:
    """Add photos to an existing gallery album.

    Args:
        album_id: the album.
        file_ids: photos to add.
    """
    album = sb.get("albums", album_id, what="album")
    for fid in file_ids:
        sb.get("files", fid, what="file")
    return sb.update("albums", album_id, file_ids=sorted(set(ids(album["file_ids"])) | set(file_ids)))


@tool("files", write=False)
def list_albums(sb: Sandbox) -> list[dict]:
    """Gallery albums with the photos in each."""
    return sb.rows("albums")


# ----------------------------------------------------------------------------------------------- notes


@tool("notes", write=True)
def create_note(sb: Sandbox, title: Name, body: Text, folder: str = "Notes") -> dict:
    """Write a new note.

    Args:
        title: the note's title.
        body: the note's text.
        folder: notes folder, default Notes.
    """
    require_unlocked(sb, "notes")
    return sb.insert(
        "notes", {"title": title, "body": body, "folder": folder, "pinned": 0, "updated_at": sb.now}, prefix="not"
    )


@tool("notes", write=False)
def search_notes(sb: Sandbox, query: Name) -> list[dict]:
    """Find notes by words in their title or text.

    Args:
        query: words to look for.
    """
    require_unlocked(sb, "notes")
    return [n for n in sb.rows("notes") if matches(query, n["title"], n["body"])]


@tool("notes", write=True)
def edit_note(sb: Sandbox, note_id: Id, text: Text, mode: Literal["append", "replace"] = "append") -> dict:
    """Add text to the end of a note, or replace its text.

    Args:
        note_id: the note.
        text: the text to add or the new text.
        mode: append (new line at the end) or replace.
    """
    require_unlocked(sb, "notes")
    note = sb.get("notes", note_id, what="note")
    body = f"{note['body']}\n{text}" if mode == "append" else text
    return sb.update("notes", note_id, body=body)


@tool("notes", write=True)
def pin_note(sb: Sandbox, note_id: Id, pinned: bool = True) -> dict:
    """Pin a note to the top of the list, or unpin it.

    Args:
        note_id: the note.
        pinned: true to pin, false to unpin.
    """
    require_unlocked(sb, "notes")
    sb.get("notes", note_id, what="note")
    return sb.update("notes", note_id, pinned=pinned)


@tool("notes", write=True)
def delete_note(sb: Sandbox, note_id: Id) -> dict:
    """Delete a note.

    Args:
        note_id: the note.
    """
    require_unlocked(sb, "notes")
    return sb.delete("notes", note_id)


@tool("notes", write=True)
def create_reminder(sb: Sandbox, title: Name, due: DateTime, list_name: str = "Reminders") -> dict:
    """Create a to-do reminder with a due time.

    Args:
        title: what to be reminded of.
        due: when, YYYY-MM-DDTHH:MM.
        list_name: reminder list, default Reminders.
    """
    if parse_dt(due) <= sb.clock():
        raise ToolError("invalid_arguments", f"due {due} is in the past (now is {sb.now})")
    return sb.insert("reminders", {"title": title, "due": due, "list_name": list_name, "done": 0}, prefix="rem")


@tool("notes", write=False)
def list_reminders(sb: Sandbox, include_done: bool = False) -> list[dict]:
    """Reminders (to-dos), soonest due first.

    Args:
        include_done: also list completed ones.
    """
    return sorted((r for r in sb.rows("reminders") if include_done or not r["done"]), key=lambda r: r["due"])


@tool("notes", write=True)
def complete_reminder(sb: Sandbox, reminder_id: Id) -> dict:
    """Tick a reminder off as done.

    Args:
        reminder_id: the reminder.
    """
    r = sb.get("reminders", reminder_id, what="reminder")
    if r["done"]:
        raise ToolError("invalid_transition", f"reminder {r['title']!r} is already done")
    return sb.update("reminders", reminder_id, done=1)


@tool("notes", write=True)
def reschedule_reminder(sb: Sandbox, reminder_id: Id, due: DateTime) -> dict:
    """Move a reminder to a new due time.

    Args:
        reminder_id: the reminder.
        due: new due time, YYYY-MM-DDTHH:MM.
    """
    r = sb.get("reminders", reminder_id, what="reminder")
    if r["done"]:
        raise ToolError("invalid_transition", f"reminder {r['title']!r} is done; reopen is not supported")
    if parse_dt(due) <= sb.clock():
        raise ToolError("invalid_arguments", f"due {due} is in the past (now is {sb.now})")
    return sb.update("reminders", reminder_id, due=due)


@tool("notes", write=True)
def delete_reminder(sb: Sandbox, reminder_id: Id) -> dict:
    """Delete a reminder.

    Args:
        reminder_id: the reminder.
    """
    return sb.delete("reminders", reminder_id)


# ----------------------------------------------------------------------------------------------- email


@tool("email", write=False)
def list_inbox(sb: Sandbox, unread_only: bool = False) -> list[dict]:
    """E-mails in the inbox, newest first.

    Args:
        unread_only: only unread mail.
    """
    mails = sorted(sb.rows("emails", folder="inbox"), key=lambda m: m["sent_at"], reverse=True)
    return [m for m in mails if not unread_only or not m["read"]]


@tool("email", write=False)
def search_emails(sb: Sandbox, query: Name) -> list[dict]:
    """Find e-mails in any folder by sender, subject or body words.

    Args:
        query: words to look for.
    """
    return [m for m in sb.rows("emails") if matches(query, m["sender"], m["subject"], m["body"])]


@tool("email", write=True)
def open_email(sb: Sandbox, email_id: Id) -> dict:
    """Open and read one e-mail (marks it read).

    Args:
        email_id: the e-mail.
    """
    sb.get("emails", email_id, what="e-mail")
    return sb.update("emails", email_id, read=1)


@tool("email", write=True)
def send_email(sb: Sandbox, to: list[Email], subject: Name, body: Text) -> dict:
    """Write and send a new e-mail.

    Args:
        to: recipients' e-mail addresses.
        subject: subject line.
        body: message text.
    """
    if not to:
        raise ToolError("invalid_arguments", "to: give at least one recipient")
    require_online(sb, "sending e-mail")
    return sb.insert(
        "emails",
        {
            "folder": "sent",
            "sender": "me",
            "recipients": sorted(to),
            "subject": subject,
            "body": body,
            "read": 1,
            "flagged": 0,
            "sent_at": sb.now,
        },
        prefix="eml",
    )


@tool("email", write=True)
def reply_email(sb: Sandbox, email_id: Id, body: Text) -> dict:
    """Reply to the sender of an e-mail.

    Args:
        email_id: the e-mail to answer.
        body: the reply text.
    """
    m = sb.get("emails", email_id, what="e-mail")
    require_online(sb, "sending e-mail")
    return sb.insert(
        "emails",
        {
            "folder": "sent",
            "sender": "me",
            "recipients": [m["sender"]],
            "subject": f"Re: {m['subject']}",
            "body": body,
            "read": 1,
            "flagged": 0,
            "sent_at": sb.now,
        },
        prefix="eml",
    )


@tool("email", write=True)
def forward_email(sb: Sandbox, email_id: Id, to: list[Email], note: str = "") -> dict:
    """Forward an e-mail to other people.

    Args:
        email_id: the e-mail.
        to: recipients' addresses.
        note: text added above the forwarded mail, optional.
    """
    m = sb.get("emails", email_id, what="e-mail")
    if not to:
        raise ToolError("invalid_arguments", "to: give at least one recipient")
    require_online(sb, "sending e-mail")
    return sb.insert(
        "emails",
        {
            "folder": "sent",
            "sender": "me",
            "recipients": sorted(to),
            "subject": f"Fwd: {m['subject']}",
            "body": f"{note}\n---\n{m['body']}".strip(),
            "read": 1,
            "flagged": 0,
            "sent_at": sb.now,
        },
        prefix="eml",
    )


@tool("email", write=True)
def move_email(sb: Sandbox, email_id: Id, folder: Literal["inbox", "archive", "trash", "spam"]) -> dict:
    """Move an e-mail to the archive, trash, spam or back to the inbox.

    Args:
        email_id: the e-mail.
        folder: destination folder.
    """
    m = sb.get("emails", email_id, what="e-mail")
    if m["folder"] == "sent":
        raise ToolError("invalid_transition", "sent mail stays in the sent folder")
    if m["folder"] == folder:
        raise ToolError("invalid_transition", f"the e-mail is already in {folder}")
    return sb.update("emails", email_id, folder=folder)


@tool("email", write=True)
def flag_email(sb: Sandbox, email_id: Id, flagged: bool = True) -> dict:
    """Flag (star) an e-mail for follow-up, or clear the flag.

    Args:
        email_id: the e-mail.
        flagged: true to flag, false to clear.
    """
    sb.get("emails", email_id, what="e-mail")
    return sb.update("emails", email_id, flagged=flagged)
