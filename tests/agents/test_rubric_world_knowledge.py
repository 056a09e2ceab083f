"""What the world allows a thing to be, and which of two alternatives a question is about. Every
problem is written for these tests; each flawed one has a sound neighbour that must pass."""

from __future__ import annotations

import pytest

from agents.rubric import rules as d
from agents.rubric.facts import ProblemFacts
from agents.rubric.magnitudes import fixed_counts, thing_measures
from agents.rubric.selection import wrong_alternative

# ---- sizes, masses, speeds and capacities of everyday things --------------------------------------


@pytest.mark.parametrize(
    "question",
    [
        "Tom's dog weighs 300 kg. How much food does it need a week?",
        "An apple weighs 3 kg. How much do 4 apples weigh?",
        "A mug holds 20 litres of tea. How many mugs fill a 100-litre urn?",
        "A pencil is 2 m long. How long are 5 pencils laid end to end?",
        "Each egg weighs 5 kg. How heavy is a box of 12 eggs?",
        "A horse gallops at 200 km/h for 2 hours. How far does it go?",
        "A teaspoon holds 2 litres of medicine. How many teaspoons are in a 10-litre bottle?",
        "An elephant weighs 40 kg. How much do 3 elephants weigh?",
    ],
)
def test_a_thing_the_world_does_not_allow_is_impossible(question: str) -> None:
    assert thing_measures(question)
    assert d.plausible(ProblemFacts(question, "x"))


@pytest.mark.parametrize(
    "question",
    [
        "A bag of apples weighs 2 kg. How many bags make 10 kg?",
        "A 2 kg bag of apples costs £3. How much do 4 bags cost?",
        "Tom's dog is 3 km from home. It walks back at 5 km/h. How long does it take?",
        "The cat is 20 cm shorter than the dog. The dog is 60 cm long. How long is the cat?",
        "The car is 400 m ahead of the bus. How far apart are they?",
        "A train of 10 cars is 250 m long. How long is each car?",
        "The elephant eats 150 kg of food a day. How much in a week?",
        "Each apple weighs 150 g and each orange weighs 200 g. What do 2 of each weigh?",
        "A bucket holds 10 litres. How many buckets fill a 500-litre tank?",
        "Kai's garden bed is 6 m long and 4 m wide. What is its area?",
    ],
)
def test_the_measure_of_something_else_is_not_the_things(question: str) -> None:
    assert not thing_measures(question)


def test_counts_fixed_by_nature_or_definition() -> None:
    assert fixed_counts("A spider has 10 legs. How many legs do 3 spiders have?")
    assert fixed_counts("A triangle has 4 sides of 5 cm. What is its perimeter?")
    assert fixed_counts("Mo goes to school in a week of 8 school days.")
    assert not fixed_counts("A spider has 8 legs. How many legs do 3 spiders have?")
    assert not fixed_counts("A week of 5 school days has 7 hours of lessons a day.")


# ---- the alternative the question asks about ------------------------------------------------------


@pytest.mark.parametrize(
    ("question", "flawed", "sound"),
    [
        (
            "Ben earns £8 an hour on weekdays and £10 an hour on Saturdays. He works 5 hours on Saturday. "
            "How much does he earn on Saturday?",
            "5 × £8 = £40.",
            "5 × £10 = £50.",
        ),
        (
            "A shirt cost £20 last month. This month it costs £25. Amy has £18. How much more does she "
            "need to buy it this month?",
            "£20 − £18 = £2.",
            "£25 − £18 = £7.",
        ),
        (
            "Mum's car uses 6 litres per 100 km and Dad's car uses 8 litres per 100 km. How much fuel does "
            "Dad's car use for 300 km?",
            "3 × 6 = 18 litres.",
            "3 × 8 = 24 litres.",
        ),
        (
            "A lamp costs $40. The town tax is 5% and the county tax is 3%, but the shop is outside the "
            "town, so it charges only the county tax. How much does the lamp cost with tax?",
            "5% + 3% = 8%. 40 × 1.08 = $43.20.",
            "40 × 1.03 = $41.20.",
        ),
    ],
)
def test_the_alternative_the_question_names_is_the_one_used(question: str, flawed: str, sound: str) -> None:
    assert wrong_alternative(ProblemFacts(question, flawed))
    assert not wrong_alternative(ProblemFacts(question, sound))
    assert d.relevant_data(ProblemFacts(question, flawed))


@pytest.mark.parametrize(
    ("question", "solution"),
    [
        (
            "Zoe gets $12 pocket money each week and saves $5 of it. Her brother saves $3 a week. How "
            "many weeks will it take Zoe to save $60?",
            "60 ÷ 5 = 12, so it takes her 12 weeks.",
        ),
        (
            "A cinema ticket costs £9 on weekdays and £12 at weekends. Lily goes on a Saturday with 2 "
            "friends. How much do the 3 tickets cost?",
            "Saturday is at the weekend: 3 × £12 = £36.",
        ),
        ("Mum is 38 years old and Dad is 41 years old. How old will Mum be in 5 years?", "38 + 5 = 43."),
        (
            "Store A sells milk at £1.10 a litre and Store B at 95p a litre. How much do 4 litres cost at "
            "Store A?",
            "4 × £1.10 = £4.40.",
        ),
    ],
)
def test_an_alternative_left_out_rightly_is_no_flaw(question: str, solution: str) -> None:
    assert not wrong_alternative(ProblemFacts(question, solution))


def test_the_situation_told_apart_from_the_prices_names_the_alternative() -> None:
    question = (
        "Rice costs £2 a bag on Mondays and £3 a bag on other days. Omar buys 4 bags on a Monday. "
        "How much does he pay?"
    )
    assert wrong_alternative(ProblemFacts(question, "4 × £3 = £12."))
    assert not wrong_alternative(ProblemFacts(question, "On a Monday a bag costs £2: 4 × £2 = £8."))


def test_the_hour_of_a_time_of_day_is_no_quantity() -> None:
    question = (
        "A train has 8 carriages with 64 seats each. It leaves at 9:15. 300 seats are taken. How many "
        "are free?"
    )
    assert d.relevant_data(ProblemFacts(question, "8 × 64 = 512. 512 − 300 − 9 = 203 seats."))
    assert not d.relevant_data(ProblemFacts(question, "8 × 64 = 512 seats. 512 − 300 = 212 seats are free."))


def test_a_parent_is_many_years_older_than_the_child() -> None:
    assert d.plausible(
        ProblemFacts("Nadia's mother is 25 years old and Nadia is 30 years old. How old is she?", "x")
    )
    assert not d.plausible(
        ProblemFacts("Nadia's mother is 41 years old and Nadia is 12. How old is she?", "x")
    )
    times = "Ben's mum is 3 times as old as Ben. Ben is 12. How old will his mum be in 4 years?"
    assert not d.plausible(ProblemFacts(times, "3 × 12 = 36. 36 + 4 = 40."))
