"""Checks that read the units and relations of a problem: dimensional analysis of the solution's
steps, relations the question states between its own numbers, and readings of number words. Each
flawed problem has a sound twin that must pass; all are written for these tests."""

from __future__ import annotations

import pytest

from agents.rubric import dimensions, relations
from agents.rubric import rules as d
from agents.rubric.facts import ProblemFacts
from agents.verify.text import with_digits
from agents.verify.verifier import verify

# ---- units carried through the solution's steps -------------------------------------------------


@pytest.mark.parametrize(
    ("question", "flawed", "sound"),
    [
        (  # km ÷ minutes is km per minute, not km/h
            "A tram covers 12 km in 20 minutes. What is its average speed in km/h?",
            "Speed = 12 ÷ 20 = 0.6 km/h.",
            "20 minutes = 1/3 hour. Speed = 12 × 3 = 36 km/h.",
        ),
        (  # litres × litres per minute is no time
            "A pond holds 240 litres and a pump empties it at 4 litres per minute. How long does it take?",
            "Time = 240 × 4 = 960 minutes.",
            "Time = 240 ÷ 4 = 60 minutes.",
        ),
        (  # an area conversion taken as a length conversion
            "A poster is 0.5 m². Each sticker covers 25 cm². How many stickers cover the poster?",
            "0.5 m² = 50 cm². 50 ÷ 25 = 2 stickers.",
            "1 m² = 10000 cm², so 0.5 m² = 5000 cm². 5000 ÷ 25 = 200 stickers.",
        ),
        (  # a duration written as hours and minutes, converted wrongly
            "A ferry crossing takes 1.75 hours. It leaves at 10:00. When does it arrive?",
            "1.75 hours is 1 hour 75 minutes, so 10:00 + 1 hour 75 minutes = 12:15.",
            "1.75 hours is 1 hour 45 minutes, so it arrives at 11:45.",
        ),
        (  # grams added to kilograms as if they were grams
            "A basket holds a 3 kg melon and 4 apples of 150 g each. What is the mass in grams?",
            "4 × 150 = 600. 3 + 600 = 603 g.",
            "4 × 150 = 600 g and 3 kg = 3000 g. 3000 + 600 = 3600 g.",
        ),
        (  # a price per seat times the show's length: the solution itself says the 2 is hours, and
            # nothing in the text is a rate per hour
            "Seats at the puppet show cost £7 each and the show lasts 2 hours. Ravi books 5 seats. "
            "What does he pay?",
            "5 × £7 = £35, and the show is 2 hours long, so £35 × 2 = £70.",
            "5 × £7 = £35, so he pays £35.",
        ),
    ],
)
def test_a_step_whose_units_do_not_fit_is_a_flaw(question: str, flawed: str, sound: str) -> None:
    assert dimensions.unit_chain(ProblemFacts(question, flawed))
    assert not dimensions.unit_chain(ProblemFacts(question, sound))
    assert d.units_consistent(ProblemFacts(question, flawed))
    assert not d.units_consistent(ProblemFacts(question, sound))


@pytest.mark.parametrize(
    ("question", "solution"),
    [
        # a rate read from the question although the solution writes only "£9"
        ("Lena is paid £9 an hour and works 6 hours. What does she earn?", "6 × £9 = £54."),
        (
            "Turf costs £7 per square metre. A lawn is 6 m by 5 m. What does the turf cost?",
            "6 × 5 = 30 m². 30 × £7 = £210.",
        ),
        (
            "A block of wax is 10 cm by 4 cm by 5 cm; wax has a density of 0.9 g/cm³. Its mass?",
            "Volume = 10 × 4 × 5 = 200 cm³. Mass = 200 × 0.9 = 180 g.",
        ),
        # a number that is a count in the solution, though the question gives it with a unit
        (
            "Ivo swims 50 m in 40 seconds at a steady pace. How long does 1 km take him?",
            "1 km = 1000 m, which is 20 lots of 50 m. 20 × 40 = 800 seconds.",
        ),
        (
            "Six friends walk 3 km to the lake in 45 minutes. How long would 12 friends take?",
            "Twice as many friends walk at the same pace: 45 minutes, not 45 ÷ 2.",
        ),
        # the solution counts with the number it also gives a unit: "30 lots of 100 m"
        (
            "Ola jogs each 100 m in 40 seconds. How long does a 3 km run take her at that pace?",
            "3 km = 3000 m, which is 30 lots of 100 m. 30 × 40 = 1200 seconds.",
        ),
        # "for 2 kg" says what the bare 2 divides by; a rate per day makes money × days an amount
        (
            "Pia pays $7.50 for 3 kg of pears and 2 kg of plums, and the pears cost $4.50. "
            "What do the plums cost per kilogram?",
            "$7.50 − $4.50 = $3.00 for 2 kg, which is $3.00 ÷ 2 = $1.50 per kilogram.",
        ),
        (
            "In April, which has 30 days, Leo puts £2 in a jar every single day. How much does he save?",
            "30 × 2 = 60, so he saves £60.",
        ),
        # each tile covers 1 m²: the count of tiles is the number of square metres
        (
            "A hall floor is 9 m by 4 m. Tiles cover 1 m² each and cost $8 each. What do the tiles cost?",
            "9 m × 4 m = 36 m², so 36 tiles. 36 × $8 = $288.",
        ),
        # a compound duration summed in its own units
        (
            "A song lasts 4 minutes. It is played twice with a 20-second gap. How long from start to end?",
            "4 min + 20 s + 4 min = 8 minutes 20 seconds.",
        ),
        # a map scale relates two lengths that are not equal
        (
            "On a map 1 cm stands for 5 km. Two towns are 7 cm apart on the map. How far apart are they?",
            "1 cm = 5 km, so 7 cm = 35 km.",
        ),
    ],
)
def test_steps_with_fitting_units_pass(question: str, solution: str) -> None:
    assert not dimensions.unit_chain(ProblemFacts(question, solution)), solution
    assert not d.units_consistent(ProblemFacts(question, solution)), solution


def test_a_variable_beside_a_number_is_not_a_unit() -> None:
    question = "A club charges a $40 fee and then $15 a month. Kim has paid $130. For how many months?"
    assert not dimensions.unit_chain(ProblemFacts(question, "40 + 15m = 130, so 15m = 90 and m = 6 months."))


# ---- relations the question states ----------------------------------------------------------------


@pytest.mark.parametrize(
    ("flawed", "sound"),
    [
        (
            "A tap drips 20 drops per minute, which is one drop every 4 seconds. How many drops in an hour?",
            "A tap drips 20 drops per minute, which is one drop every 3 seconds. How many drops in an hour?",
        ),
        (
            "A van drives at a steady 60 km/h and covers 150 km in 2 hours. How far does it go in 3 hours?",
            "A van drives at a steady 60 km/h and covers 120 km in 2 hours. How far does it go in 3 hours?",
        ),
        (
            "Noor left at 7:40 a.m. and reached the pool at 8:25 a.m., a ride of 35 minutes. She swam for an "
            "hour. When did she finish?",
            "Noor left at 7:40 a.m. and reached the pool at 8:25 a.m., a ride of 45 minutes. She swam for an "
            "hour. When did she finish?",
        ),
        (
            "A box of 30 crayons has 12 red and 9 blue, and the rest are green. There are 10 green crayons. "
            "How many are not red?",
            "A box of 30 crayons has 12 red and 9 blue, and the rest are green. There are 9 green crayons. "
            "How many are not red?",
        ),
        (
            "In a class, 12 of the 30 pupils, which is 30%, walk to school. How many do not walk?",
            "In a class, 12 of the 30 pupils, which is 40%, walk to school. How many do not walk?",
        ),
    ],
)
def test_a_relation_the_numbers_break_is_a_contradiction(flawed: str, sound: str) -> None:
    assert relations.contradiction(ProblemFacts(flawed, "x"))
    assert not relations.contradiction(ProblemFacts(sound, "x"))
    assert d.data_consistent(ProblemFacts(flawed, "x"))


@pytest.mark.parametrize(
    "question",
    [
        "A bus drives 40 km at 60 km/h, then stops for 10 minutes. How long is the trip?",
        "The shop opens at 9:00 and closes at 17:30, with a lunch break of 45 minutes. How long is it open?",
        "A car would cover 90 km in 1 hour at 90 km/h. How far in 3 hours?",
    ],
)
def test_separate_parts_of_a_story_are_not_one_relation(question: str) -> None:
    assert not relations.contradiction(ProblemFacts(question, "x"))


# ---- number words, fractions and answers read as meant ----------------------------------------------


def test_money_and_fractions_said_in_words_are_read() -> None:
    assert with_digits("two pounds forty-five") == "£2.45"
    assert with_digits("three dollars and fifty cents") == "$3.50"
    assert with_digits("It is two-thirds full") == "It is 2/3 full"
    assert with_digits("It weighs 2 pounds 4 ounces") == "It weighs 2 pounds 4 ounces"
    assert not verify("2 hours 20 minutes = 2⅓ hours = 7/3 hours.").errors
    worded = "Three lots of two pounds forty-five make seven pounds twenty-five."
    assert [e.actual for e in verify(worded).errors] == ["7.35"]


def test_a_worded_sum_of_money_uses_only_given_numbers() -> None:
    question = "Ella buys 3 notebooks for school. Each notebook costs £2.45. How much does she spend?"
    sound = "Three lots of two pounds forty-five make seven pounds thirty-five, so Ella spends £7.35."
    assert not d.invented(ProblemFacts(question, sound))
    pence = ProblemFacts("Pens cost 65p each. What do 8 pens cost?", "Eight times sixty-five pence is 520p.")
    assert not d.invented(pence)


def test_a_check_after_the_answer_is_not_the_answer() -> None:
    question = "A library has 84 books, which is 20% more than last month. How many books did it have then?"
    solution = "84 ÷ 1.2 = 70 books. Check: 20% of 70 = 14, and 70 + 14 = 84."
    assert not d.answers_the_question(ProblemFacts(question, solution))


def test_a_measure_given_as_an_amount_needs_no_lengths() -> None:
    question = "A 60-litre tank is full. 1/3 of the water is used. How many litres are left?"
    assert not d.invented(ProblemFacts(question, "1/3 of 60 = 20 litres, leaving 60 − 20 = 40 litres."))


def test_a_percentage_asked_about_money_is_answered_by_a_percentage() -> None:
    question = "A coat bought for £80 is sold for £100. What is the percentage profit on the cost?"
    assert not d.answers_the_question(ProblemFacts(question, "Profit = £20. 20 ÷ 80 × 100 = 25%."))


def test_cubic_metres_are_asked_as_a_volume() -> None:
    question = "A tank is 3 m long, 2 m wide and 1 m deep. How many cubic metres of water does it hold?"
    assert not d.answers_the_question(ProblemFacts(question, "Volume = 3 × 2 × 1 = 6 m³."))


def test_a_time_that_does_not_change_is_not_scaled_by_a_ratio() -> None:
    question = (
        "A band of 4 plays 6 songs of 3 minutes each with a 1-minute gap between songs. Next week 8 play "
        "the same songs with the same gaps. How long will their set last next week?"
    )
    sound = "Songs: 6 × 3 = 18 minutes. Gaps: 5 × 1 = 5 minutes. 18 + 5 = 23 minutes, however many play."
    flawed = (
        "Songs: 6 × 3 = 18 minutes. Gaps: 5 × 1 = 5 minutes. 18 + 5 = 23. Twice the players: "
        "23 × 2 = 46 minutes."
    )
    assert not d.proportional(ProblemFacts(question, sound))
    assert d.proportional(ProblemFacts(question, flawed))


@pytest.mark.parametrize(
    ("wrong_claim", "right_claim"),
    [
        ("The sum of twelve and five is eighteen.", "The sum of twelve and five is seventeen."),
        ("Taking five from twelve leaves eight.", "Taking five from twelve leaves seven."),
        ("Dividing thirty by five gives seven.", "Dividing thirty by five gives six."),
        ("The product of six and seven is forty-eight.", "The product of six and seven is forty-two."),
        ("Double thirteen is twenty-four.", "Double thirteen is twenty-six."),
        ("Five more than twelve is eighteen.", "Five more than twelve is seventeen."),
        ("Five less than twelve is eight.", "Five less than twelve is seven."),
        ("Four boxes of six eggs is twenty-six eggs.", "Four boxes of six eggs is twenty-four eggs."),
        (
            "She has twelve apples and gets five more, which makes eighteen apples.",
            "She has twelve apples and gets five more, which makes seventeen apples.",
        ),
    ],
)
def test_operations_said_in_words_are_checked(wrong_claim: str, right_claim: str) -> None:
    assert verify(wrong_claim).errors, wrong_claim
    assert verify(right_claim).checked and not verify(right_claim).errors, right_claim


def test_a_rate_written_before_its_number_is_a_rate() -> None:
    question = (
        "A class collects 3 kg of cans each week for 12 weeks. Each kg earns 80p. How much do they raise?"
    )
    assert not dimensions.unit_chain(ProblemFacts(question, "3 × 12 = 36 kg. 36 × 80p = 2880p = £28.80."))


def test_a_ratio_of_one_kind_in_two_units_is_converted() -> None:
    question = "A bottle holds 1.5 litres. How many 300 ml cups can be filled from it?"
    assert dimensions.unit_chain(ProblemFacts(question, "1.5 ÷ 300 = 0.005 cups."))
    assert not dimensions.unit_chain(ProblemFacts(question, "1.5 litres = 1500 ml. 1500 ÷ 300 = 5 cups."))


def test_a_whole_part_with_a_remainder_is_carried_as_a_count() -> None:
    question = "50 pupils go on a trip. Each minibus holds 12 pupils. How many minibuses are needed?"
    solution = "50 ÷ 12 = 4 remainder 2. 4 × 12 = 48 pupils, so one more minibus: 4 + 1 = 5 minibuses."
    assert not dimensions.unit_chain(ProblemFacts(question, solution))


def test_add_said_in_words_is_a_sum() -> None:
    assert verify("Fourteen add nine is twenty-two.").errors
    assert not verify("Fourteen add nine is twenty-three.").errors
