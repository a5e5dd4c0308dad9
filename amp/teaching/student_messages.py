"""What a student's phone says, in one place: the Streamlit student page (``views/teach_student.py``)
and the light vote page (:mod:`amp.classroom.vote_routes`) say the same words for the same event.

Plain text with ``{words}`` holes: each page puts in the answer in words (:func:`answer_words`) as
it shows text safely (the Streamlit page escapes Markdown, the light page sets ``textContent``).
"""

from __future__ import annotations

from amp.teaching.poll_records import CONFIDENCE_LABELS, AnswerOutcome, PollItem

__all__ = ["ALL_DONE", "CHANGE_UNTIL_REVEAL", "CHOICE_QUESTION", "CLOSED", "CONFIDENCE_QUESTION", "CONFIDENCE_LABELS", "CLOSED_NOT_RECORDED", "LOCKED", "PICK_FIRST",
           "answer_words", "answered", "no_poll", "not_recorded"]

#: The form's two questions.
CHOICE_QUESTION = "Which meaning do you understand?"
CONFIDENCE_QUESTION = "How confident are you?"
#: A revealed sentence (the teacher showed the model's answer): its answers cannot change.
LOCKED = "Your teacher has revealed this sentence's answer, so its answers are locked."
#: Said beside a vote that may still change.
CHANGE_UNTIL_REVEAL = "You can change it until your teacher reveals this sentence."
#: Submit pressed with no meaning picked.
PICK_FIRST = "Pick one of the two meanings first."
#: The poll was closed between the page's load and the answer.
CLOSED_NOT_RECORDED = "The poll was just closed: your answer was not recorded."
#: The poll is closed.
CLOSED = "This poll is closed: it takes no more answers. Thank you!"
#: Every sentence seen.
ALL_DONE = ("All done — thank you for taking part! You can change an answer until your teacher reveals "
            "its sentence.")


def answer_words(item: PollItem, choice: int, confidence: int) -> str:
    """An answer in words: the reading as the student read it (its paraphrase), and how sure."""
    return f"“{item.paraphrase(choice)}”, {CONFIDENCE_LABELS[confidence]}"


def answered(outcome: AnswerOutcome, words: str, *, line_break: str = " ") -> str:
    """What an answer did, in words (``words`` from :func:`answer_words`, made safe by the page)."""
    return {
        AnswerOutcome.RECORDED: f"Thanks! Your answer is in.{line_break}Your answer: {words}. {CHANGE_UNTIL_REVEAL}",
        AnswerOutcome.CHANGED: f"Changed to {words}.",
        AnswerOutcome.UNCHANGED: f"Your answer stays {words}.",
    }[outcome]


def not_recorded(why: str) -> str:
    """An answer the store refused, and why."""
    return f"Your answer was not recorded: {why}"


def no_poll(code: str) -> str:
    """A link whose poll code names no poll (``code`` made safe by the page)."""
    return f"There is no poll with the code {code or '(empty)'}. Check the link or ask your teacher for the code."
