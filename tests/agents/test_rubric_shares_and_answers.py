"""Operations read from what the story does to a whole, times the story fixes, and whether the
last statement answers the question. Every problem is written for these tests; each flawed one has
a sound twin that must pass."""

from __future__ import annotations

import pytest

from agents.rubric import relations
from agents.rubric import rules as d
from agents.rubric.answers import answer_role
from agents.rubric.facts import ProblemFacts
from agents.rubric.operations import more_after_taking, share_of_a_whole


@pytest.mark.parametrize(
    ("question", "flawed", "sound"),
    [
        (
            "A pack of 8 yoghurts costs £2.40. How much does one yoghurt cost?",
            "£2.40 × 8 = £19.20.",
            "£2.40 ÷ 8 = £0.30.",
        ),
        (
            "A rope 24 m long is cut into 4 equal pieces. How long is each piece?",
            "24 − 4 = 20 m.",
            "24 ÷ 4 = 6 m.",
        ),
        (
            "Kim shares 38 sweets equally among 4 friends. How many whole sweets does each friend get?",
            "38 × 4 = 152 sweets each.",
            "38 ÷ 4 = 9 remainder 2, so each friend gets 9 sweets.",
        ),
        (
            "A plank 3.6 m long is cut into 4 equal pieces. How long is each piece in centimetres?",
            "3.6 × 4 = 14.4, so each piece is 1440 cm.",
            "3.6 m = 360 cm. 360 ÷ 4 = 90 cm.",
        ),
    ],
)
def test_one_equal_share_is_the_whole_divided(question: str, flawed: str, sound: str) -> None:
    assert share_of_a_whole(ProblemFacts(question, flawed))
    assert not share_of_a_whole(ProblemFacts(question, sound))
    assert d.operation_fits(ProblemFacts(question, flawed))


def test_a_share_of_another_kind_is_not_checked_against_the_whole() -> None:
    question = "A pack of 6 pencils costs €3, and each pencil is 18 cm long. How long is each pencil?"
    assert not share_of_a_whole(ProblemFacts(question, "Each pencil is still 18 cm long."))


def test_taking_away_leaves_no_more_than_there_was() -> None:
    question = "Sam had 45 stickers. He gave 12 to his sister. How many does he have now?"
    assert more_after_taking(ProblemFacts(question, "45 + 12 = 57 stickers."))
    assert not more_after_taking(ProblemFacts(question, "45 − 12 = 33 stickers."))
    gained = "Sam had 45 stickers. He gave 12 away and then bought 30 more. How many does he have now?"
    assert not more_after_taking(ProblemFacts(gained, "45 − 12 + 30 = 63 stickers."))


def test_work_shared_out_still_scales() -> None:
    question = "4 workers paint a fence in 6 hours. How long do 8 workers take, working at the same rate?"
    assert not d.proportional(
        ProblemFacts(question, "Twice the workers take half the time: 6 ÷ 2 = 3 hours.")
    )


@pytest.mark.parametrize(
    ("flawed", "sound"),
    [
        (
            "A box holds 48 chocolates, which is 4 rows of 10. How many chocolates are in 3 boxes?",
            "A box holds 48 chocolates, which is 4 rows of 12. How many chocolates are in 3 boxes?",
        ),
        (
            "Half of the 30 pupils, that is 16 pupils, have school dinners. How many do not?",
            "Half of the 30 pupils, that is 15 pupils, have school dinners. How many do not?",
        ),
    ],
)
def test_a_share_or_an_array_said_twice_must_agree(flawed: str, sound: str) -> None:
    assert relations.contradiction(ProblemFacts(flawed, "x"))
    assert not relations.contradiction(ProblemFacts(sound, "x"))


@pytest.mark.parametrize(
    ("question", "flawed", "sound"),
    [
        (
            "Mo has £20. He buys a book for £7.50. How much money does he have left?",
            "The book costs £7.50.",
            "£20 − £7.50 = £12.50 left.",
        ),
        (
            "Ann has 3 times as many sweets as Ben. Ben has 8. How many do they have together?",
            "3 × 8 = 24, so Ann has 24 sweets.",
            "Ann has 3 × 8 = 24, so together they have 24 + 8 = 32 sweets.",
        ),
        (
            "A cinema has 12 rows of 15 seats. 140 seats are taken. How many seats are empty?",
            "12 × 15 = 180 seats in all.",
            "12 × 15 = 180 seats. 180 − 140 = 40 seats are empty.",
        ),
    ],
)
def test_the_last_statement_answers_what_is_asked(question: str, flawed: str, sound: str) -> None:
    assert answer_role(ProblemFacts(question, flawed))
    assert not answer_role(ProblemFacts(question, sound))
    assert d.answers_the_question(ProblemFacts(question, flawed))


def test_a_fixed_time_may_be_the_answer() -> None:
    question = (
        "One loaf bakes in 35 minutes. Two loaves go in the oven together. After how many minutes are "
        "both baked?"
    )
    assert not answer_role(
        ProblemFacts(question, "They bake at the same time, so both are ready after 35 minutes.")
    )


def test_speeds_and_durations_said_in_words_are_answers_and_traced() -> None:
    runner = (
        "A runner does 5 laps of a 400 m track in 10 minutes. What is her average speed in metres per minute?"
    )
    assert not d.answers_the_question(
        ProblemFacts(runner, "5 × 400 = 2000 m. 2000 ÷ 10 = 200 metres per minute.")
    )
    printer = "A printer prints 20 pages a minute. How long does it take to print 350 pages?"
    solution = "350 ÷ 20 = 17.5 minutes, which is 17 minutes 30 seconds."
    assert not d.invented(ProblemFacts(printer, solution))


@pytest.mark.parametrize(
    ("question", "solution"),
    [
        (
            "Last week Mia ran 12 km. This week she ran 15 km. By what percentage did her distance increase?",
            "15 − 12 = 3 km. 3 ÷ 12 × 100 = 25%.",
        ),
        (
            "A square tile has sides of 30 cm. How many tiles are needed to cover a floor 3 m by 2.4 m?",
            "3 m = 300 cm and 2.4 m = 240 cm. 300 ÷ 30 = 10 and 240 ÷ 30 = 8. 10 × 8 = 80 tiles.",
        ),
        (
            "A film starts at 6:45 p.m. and lasts 1 hour 55 minutes. At what time does it end?",
            "6:45 p.m. + 2 hours = 8:45 p.m. 8:45 p.m. − 5 minutes = 8:40 p.m.",
        ),
        ("Mum is 4 times as old as Ella. Ella is 9. How old is Mum?", "4 × 9 = 36, so Mum is 36."),
    ],
)
def test_sound_answers_said_plainly_raise_nothing(question: str, solution: str) -> None:
    facts = ProblemFacts(question, solution)
    for check in (d.answers_the_question, d.arithmetic, d.units_consistent):
        assert not check(facts), (check.check, question)


def test_ages_grow_by_years_not_in_proportion() -> None:
    question = "When Mia was 4, her aunt was 7 times as old. How old will the aunt be when Mia is 8?"
    assert d.proportional(
        ProblemFacts(question, "The aunt was 7 × 4 = 28. Mia's age doubles, so 28 × 2 = 56.")
    )
    sound = "The aunt was 7 × 4 = 28, which is 28 − 4 = 24 years older. When Mia is 8 she is 8 + 24 = 32."
    assert not d.proportional(ProblemFacts(question, sound))


def test_a_month_has_at_most_31_days_and_shares_of_them_agree() -> None:
    assert d.plausible(ProblemFacts("A month has 40 days. Kim saves £2 a day. How much in a month?", "x"))
    assert not d.plausible(ProblemFacts("A month has 30 days. Kim saves £2 a day. How much in a month?", "x"))
    flawed = "A class of 30 pupils went on a trip. 12 of them, which is 50% of the class, took lunches."
    assert relations.contradiction(ProblemFacts(flawed + " How many did not?", "x"))
    assert not relations.contradiction(ProblemFacts(flawed.replace("50%", "40%") + " How many did not?", "x"))


def test_a_rate_divided_the_wrong_way_has_the_wrong_units() -> None:
    question = "A car travels 150 km on 10 litres of fuel. How many km does it travel on each litre?"
    assert d.units_consistent(ProblemFacts(question, "10 ÷ 150 = 0.07 km."))
    assert not d.units_consistent(ProblemFacts(question, "150 ÷ 10 = 15 km."))


def test_not_asks_for_what_remains() -> None:
    question = "A box holds 6 rows of 8 eggs. 13 eggs are broken. How many eggs are not broken?"
    assert answer_role(ProblemFacts(question, "6 × 8 = 48 eggs in total."))
    assert not answer_role(ProblemFacts(question, "6 × 8 = 48 eggs. 48 − 13 = 35 eggs are not broken."))


def test_using_some_to_make_something_is_taking_away() -> None:
    question = "Nia had 80 beads. She used 35 to make a necklace. How many beads does she have left?"
    assert more_after_taking(ProblemFacts(question, "80 + 35 = 115 beads."))
    coins = (
        "Jake has three £2 coins and four 50p coins, which make £8. He spends £3.50. How much money "
        "does he have left?"
    )
    assert not more_after_taking(ProblemFacts(coins, "3 × £2 + 4 × £0.50 = £8. £8 − £3.50 = £4.50."))


@pytest.mark.parametrize(
    ("question", "solution"),
    [
        (
            "A die is rolled once. What is the probability of rolling a number greater than 4?",
            "A die has 6 faces; 5 and 6 are greater than 4. The probability is 2/6 = 1/3.",
        ),
        (
            "A card is picked at random from a full pack of playing cards. What is the probability that it "
            "is a heart?",
            "There are 13 hearts in 52 cards. 13/52 = 1/4.",
        ),
        ("A coin is tossed twice. What is the probability of two heads?", "1/2 × 1/2 = 1/4."),
        (
            "A cube has edges of 5 cm. What is the total length of all its edges?",
            "A cube has 12 edges. 12 × 5 = 60 cm.",
        ),
        (
            "A decade is how many months?",
            "A decade is 10 years and a year is 12 months. 10 × 12 = 120 months.",
        ),
        (
            "A clock's minute hand turns through how many degrees in 20 minutes?",
            "In 60 minutes it turns 360°. In 20 minutes it turns 360 ÷ 3 = 120°.",
        ),
        (
            "A bag holds red and blue marbles in the ratio 3 : 5. There are 24 red marbles. How many marbles "
            "are there altogether?",
            "3 parts = 24, so 1 part = 8. 3 + 5 = 8 parts. 8 × 8 = 64 marbles.",
        ),
    ],
)
def test_sound_problems_of_chance_shapes_and_parts_raise_nothing(question: str, solution: str) -> None:
    facts = ProblemFacts(question, solution)
    for check in (d.plausible, d.invented, d.answers_the_question, d.arithmetic):
        assert not check(facts), (check.check, question)


def test_a_probability_above_one_is_still_impossible() -> None:
    question = "The probability that it snows on Friday is 1.4. What is the probability that it does not?"
    assert d.plausible(ProblemFacts(question, "1 − 1.4 = −0.4."))


def test_money_spent_leaves_less_even_when_the_answer_has_no_sign() -> None:
    question = "Mia had £20 and spent £7. How much does she have left?"
    assert more_after_taking(ProblemFacts(question, "20 + 7 = 27"))
    assert not more_after_taking(ProblemFacts(question, "20 − 7 = 13"))


@pytest.mark.parametrize(
    ("question", "solution"),
    [
        (
            "A rectangular pool is 20 m long and 8 m wide. A path 1 m wide goes all round it. What is the "
            "area of the path?",
            "With the path the outside is 22 m by 10 m, which is 220 m². The pool is 20 × 8 = 160 m². The "
            "path is 220 − 160 = 60 m².",
        ),
        (
            "A shop sells 2 litres of milk for £1.50 or 4 pints for £1.80. Which is cheaper per litre if a "
            "pint is 0.57 litres?",
            "2 litres: £1.50 ÷ 2 = £0.75 per litre. 4 pints = 4 × 0.57 = 2.28 litres; £1.80 ÷ 2.28 ≈ £0.79 "
            "per litre. The 2-litre bottle is cheaper.",
        ),
        (
            "The school day starts at 8:45 and ends at 15:15. Lunch lasts 1 hour. How long are the lessons "
            "altogether?",
            "From 8:45 to 15:15 is 6 hours 30 minutes. Take away 1 hour of lunch: 5 hours 30 minutes.",
        ),
    ],
)
def test_a_border_a_count_in_another_unit_and_a_lunch_break_raise_nothing(
    question: str, solution: str
) -> None:
    facts = ProblemFacts(question, solution)
    for check in (d.invented, d.arithmetic, d.data_consistent):
        assert not check(facts), (check.check, question)


def test_a_measure_worked_back_from_a_result_is_still_invented() -> None:
    question = "One litre of paint covers 10 m² of wall. A wall is 5 m long. How many litres does it need?"
    assert d.invented(
        ProblemFacts(question, "Taking the wall as 2.4 m high: 5 × 2.4 = 12 m². 12 ÷ 10 = 1.2 litres.")
    )


def test_what_was_had_may_carry_an_adjective_or_no_noun() -> None:
    red = "Sam had 45 red stickers. He gave 12 to his sister. How many stickers does he have now?"
    assert more_after_taking(ProblemFacts(red, "45 + 12 = 57"))
    bare = "Sam had 45. He gave 12 away. How many does he have now?"
    assert more_after_taking(ProblemFacts(bare, "45 + 12 = 57"))


def test_a_cuboids_edges_are_facts_but_its_height_is_not() -> None:
    box = "A cuboid box is 20 cm long and 10 cm wide. What is its volume?"
    assert d.invented(ProblemFacts(box, "20 × 10 × 8 = 1600 cm³"))
    cube = "A cube has edges of 5 cm. What is the total length of all its edges?"
    assert not d.invented(ProblemFacts(cube, "A cube has 12 edges. 12 × 5 = 60 cm."))


def test_a_price_the_story_says_is_not_paid_is_not_used() -> None:
    question = (
        "A cinema ticket costs £8. Popcorn costs £4 but Maya does not buy any. She buys 3 tickets. How much?"
    )
    assert d.relevant_data(ProblemFacts(question, "3 × £8 + £4 = £28."))
    assert not d.relevant_data(ProblemFacts(question, "3 × £8 = £24. She buys no popcorn."))


def test_a_rectangles_sides_and_area_must_agree() -> None:
    flawed = (
        "A rectangle has a length of 10 cm, a width of 4 cm and an area of 36 cm². What is its perimeter?"
    )
    assert relations.contradiction(ProblemFacts(flawed, "2 × (10 + 4) = 28 cm."))
    sound = flawed.replace("36 cm²", "40 cm²")
    assert not relations.contradiction(ProblemFacts(sound, "2 × (10 + 4) = 28 cm."))


def test_shared_into_jars_is_equal_shares() -> None:
    question = "A bag of 5 kg of flour is shared equally into 4 jars. How much flour goes into each jar?"
    assert share_of_a_whole(ProblemFacts(question, "5 × 4 = 20 kg."))
    assert not share_of_a_whole(ProblemFacts(question, "5 ÷ 4 = 1.25 kg."))


@pytest.mark.parametrize(
    ("question", "solution"),
    [
        (
            "There are 24 pupils; 3/8 of them wear glasses. How many pupils do not wear glasses?",
            "3/8 of 24 = 9 wear glasses. 24 − 9 = 15 do not.",
        ),
        (
            "A newborn kitten weighs 120 g. It gains 100 g a week. How much does it weigh after 4 weeks?",
            "120 + 4 × 100 = 520 g.",
        ),
    ],
)
def test_a_bare_count_a_young_animal_and_a_product_in_a_sum_raise_nothing(
    question: str, solution: str
) -> None:
    facts = ProblemFacts(question, solution)
    for check in (d.answers_the_question, d.plausible, d.units_consistent):
        assert not check(facts), (check.check, question)


def test_a_ratio_said_twice_must_agree() -> None:
    flawed = (
        "A car uses 8 litres of fuel per 100 km, which is 12 litres for every 200 km. How much for 500 km?"
    )
    assert relations.contradiction(ProblemFacts(flawed, "5 × 8 = 40 litres."))
    sound = flawed.replace("12 litres", "16 litres")
    assert not relations.contradiction(ProblemFacts(sound, "5 × 8 = 40 litres."))


def test_containers_filled_are_the_total_divided_by_what_one_holds() -> None:
    question = "A baker makes 96 buns and puts them in bags of 8. How many bags does she fill?"
    assert d.operation_fits(ProblemFacts(question, "96 × 8 = 768 bags."))
    assert not d.operation_fits(ProblemFacts(question, "96 ÷ 8 = 12 bags."))
    rounded = "A baker makes 100 buns and puts them in bags of 8. How many bags does she need?"
    assert not d.operation_fits(ProblemFacts(rounded, "100 ÷ 8 = 12 remainder 4, so 13 bags."))
