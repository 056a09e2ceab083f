"""Mechanisms of the offline panel that read meaning: each finds a flaw by what the problem says,
and leaves the sound version of the same problem alone."""

from __future__ import annotations

from fractions import Fraction

import pytest

from agents.rubric import rules as d
from agents.rubric.facts import ProblemFacts
from agents.verify.verifier import verify


def wrong(solution: str) -> list[str]:
    return [e.claim for e in verify(solution).errors]


# ---- the verifier ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("solution", "ok"),
    [
        ("Paint : water = 300 : 600 = 1 : 2.", True),
        ("Paint : water = 300 : 600 = 1 : 3.", False),
        ("It starts at 9:15 and 9:15 + 30 min = 9:45.", True),  # a clock is not a ratio
        ("Step 1: 120 × 0.9 = 108.", True),  # a label's colon is not a ratio
    ],
)
def test_ratios_are_compared_as_ratios(solution: str, ok: bool) -> None:
    assert (wrong(solution) == []) is ok


def test_a_sum_said_as_two_numbers_together_is_checked() -> None:
    assert wrong(
        "Ten percent is thirty and five percent is fifteen, so thirty and fifteen together, which is fifty."
    )
    assert not wrong("Thirty and fifteen together, which is forty-five.")


def test_money_written_after_or_before_a_product_is_read() -> None:
    assert wrong("Over 3 years: 45 × 3 = 125 €.")
    assert not wrong("Adults: 2 * $12 = $24. Children: 3 * $7 = $21.")


def test_a_compound_duration_written_as_decimal_hours_is_a_conversion() -> None:
    found = verify("Time: 2 h 15 min = 2.25 h. Speed: 9 ÷ 2.25 = 4 km/h.")
    assert not found.errors and Fraction(9, 4) in {v for _, v in found.results}


# ---- where a solution's numbers come from --------------------------------------------------------


@pytest.mark.parametrize(
    ("question", "solution"),
    [
        ("2/3 of the 30 pupils walk. How many do not walk?", "1/3 of 30 = 10 pupils do not walk."),
        (
            "Pipe A fills a tank in 10 minutes and pipe B in 15 minutes. Both are opened. How long?",
            "1/10 + 1/15 = 3/30 + 2/30 = 5/30 = 1/6 a minute, so 6 minutes.",
        ),
        (
            "The film lasts 50 minutes and the talk 35 minutes. How long in all?",
            "50 + 35 = 85 minutes, which is 1 hour and 25 minutes.",
        ),
        (
            "45% of the 600 fans wear red. How many wear red?",
            "40% of 600 is 240 and 5% of 600 is 30, so 240 + 30 = 270 fans.",
        ),
    ],
)
def test_numbers_worked_out_from_the_question_are_not_invented(question: str, solution: str) -> None:
    assert ProblemFacts(question, solution).untraced == []


def test_an_aside_after_the_answer_is_not_the_answer() -> None:
    facts = ProblemFacts(
        "How many shelves of 40 cm fit on a 3 m wall?", "300 ÷ 40 = 7.5, so 7 shelves (20 cm spare)."
    )
    assert facts.final_answer == 7


# ---- does the answer answer the question -------------------------------------------------------


# ---- quantities the world allows ----------------------------------------------------------------


def test_clock_arithmetic_in_words_is_checked() -> None:
    assert wrong(
        "Two hours after a quarter to eight is a quarter to ten. Twenty more minutes brings us to ten past "
        "ten."
    )
    assert not wrong(
        "Two hours after a quarter to eight is a quarter to ten. Twenty more minutes brings us to five "
        "past ten."
    )


# ---- what does not scale ------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("solution", "flawed"),
    [
        ("4 cups at 30 °C give 4 × 30 = 120 °C.", True),
        ("Water of one temperature stays at it: 30 °C.", False),
    ],
)
def test_water_poured_together_keeps_its_temperature(solution: str, flawed: bool) -> None:
    question = (
        "A cup of water is at 30 °C. Ben pours 4 such cups into a bowl. What is the temperature in the bowl?"
    )
    assert bool(d.proportional(ProblemFacts(question, solution))) is flawed


def test_the_size_of_each_thing_does_not_grow_with_how_many() -> None:
    question = (
        "A box of 10 nails costs €2 and every nail in it is 5 cm long. How long is each nail in a box of 30?"
    )
    assert d.proportional(ProblemFacts(question, "30 is 3 times 10, so 3 × 5 = 15 cm."))
    assert not d.proportional(ProblemFacts(question, "The nails are the same: each is 5 cm long."))


# ---- the roles of quantities --------------------------------------------------------------------


def test_a_fact_the_solution_states_but_the_question_never_gave_is_invented() -> None:
    question = (
        "A car uses 5 litres of fuel per 100 km, and fuel costs €2 per litre. What does the trip to the "
        "coast cost?"
    )
    assert d.invented(ProblemFacts(question, "The trip is 300 km, so 3 × 5 = 15 litres and 15 × 2 = €30."))
    week = "A hen house gives 12 eggs a day. How many eggs in a week?"
    assert not d.invented(ProblemFacts(week, "A week has 7 days. 12 × 7 = 84 eggs."))


def test_paid_minus_change_is_what_was_spent() -> None:
    flawed = (
        "Ada buys 3 pens at €1.50 each. She pays with a €10 note and gets €6 in change. What did the pens "
        "cost?"
    )
    assert d.data_consistent(ProblemFacts(flawed, "3 × 1.50 = €4.50."))
    sound = flawed.replace("€6", "€5.50")
    assert not d.data_consistent(ProblemFacts(sound, "3 × 1.50 = €4.50."))


def test_a_journey_between_two_clock_times_lasts_what_they_say() -> None:
    q = (
        "The bus leaves at 9:10 and arrives at 11:40, a journey of exactly 3 hours. It covers 150 km. What "
        "is its speed?"
    )
    assert d.data_consistent(ProblemFacts(q, "150 ÷ 3 = 50 km/h."))
    assert not d.data_consistent(ProblemFacts(q.replace("3 hours", "2.5 hours"), "150 ÷ 2.5 = 60 km/h."))


def test_a_count_asked_as_the_greatest_number_is_whole() -> None:
    q = "Books cost €6 each. Tim has €40. What is the greatest number of books he can buy?"
    assert d.whole_counts(ProblemFacts(q, "40 ÷ 6 ≈ 6.67, so 6.67 books."))
    assert not d.whole_counts(ProblemFacts(q, "40 ÷ 6 = 6 remainder 4, so 6 books."))


@pytest.mark.parametrize(
    ("question", "flawed", "sound"),
    [
        (
            "There are 50 guests and each table seats 8. How many tables are needed?",
            "50 × 8 = 400 tables.",
            "50 ÷ 8 = 6 remainder 2, so 7 tables.",
        ),
        (
            "Flour costs €3 per kg. How much do 400 g cost?",
            "400 × 3 = €1200.",
            "400 g = 0.4 kg. 0.4 × 3 = €1.20.",
        ),
        (
            "A mug costs £6. How much do 4 mugs cost?",
            "6 + 4 = £10.",
            "4 × 6 = £24.",
        ),
    ],
)
def test_containers_rates_and_prices_meet_the_right_operation(question: str, flawed: str, sound: str) -> None:
    def found(solution: str) -> bool:
        facts = ProblemFacts(question, solution)
        return bool(d.operation_fits(facts) or d.units_consistent(facts))

    assert found(flawed)
    assert not found(sound)


def test_the_change_is_not_the_amount_after_it() -> None:
    question = "A lamp costs £40 and is reduced by 25%. What is the new price?"
    assert d.answers_the_question(ProblemFacts(question, "25% of 40 = £10. The lamp is £10 cheaper."))
    assert not d.answers_the_question(ProblemFacts(question, "25% of 40 = 10. 40 − 10 = £30."))


def test_height_is_not_proportional_to_age_written_with_hyphens() -> None:
    question = "A 6-year-old girl is 115 cm tall. How tall will she be at 12?"
    assert d.proportional(ProblemFacts(question, "12 is twice 6, so 2 × 115 = 230 cm."))


@pytest.mark.parametrize(
    ("question", "solution"),
    [
        (
            "A van holds 9 people. How many vans are needed for 40 people?",
            "40 ÷ 9 = 4 remainder 4, so 5 vans.",
        ),
        (
            "A cake is cut into 10 equal slices. 4 are eaten. What fraction is left?",
            "10 − 4 = 6, so 6/10 = 3/5.",
        ),
        (
            "The width of a rectangle is 5 m and its length is twice its width. What is its area?",
            "2 × 5 = 10 m. 10 × 5 = 50 m².",
        ),
        (
            "It was −2 °C at dawn and rose by 7 °C by noon. What was the temperature at noon?",
            "−2 + 7 = 5 °C.",
        ),
        (
            "A bus leaves at 13:40 and arrives at 15:05. How long is the trip?",
            "From 13:40 to 15:05 is 1 hour 25 minutes.",
        ),
        (
            "How many boxes of 6 can 40 eggs fill, and how many eggs are left over?",
            "40 ÷ 6 = 6 remainder 4: 6 boxes, 4 left over.",
        ),
    ],
)
def test_sound_problems_of_common_shapes_raise_nothing(question: str, solution: str) -> None:
    facts = ProblemFacts(question, solution)
    for detector in (d.invented, d.operation_fits, d.proportional, d.one_task, d.answers_the_question):
        assert not detector(facts), detector.check


def test_three_questions_in_one_sentence_are_several_tasks() -> None:
    question = (
        "A pen costs £2. What do 3 pens cost, what is the change from £10, and how many pens does £9 buy?"
    )
    assert d.one_task(ProblemFacts(question, "3 × 2 = 6; 10 − 6 = 4; 9 ÷ 2 = 4 remainder 1."))


def test_dozens_months_and_parts_of_an_hour_are_read() -> None:
    assert not wrong("3 dozen = 3 × 12 = 36 eggs.")
    april = ProblemFacts(
        "A clock loses 3 minutes a day. How much does it lose in April?",
        "April has 30 days. 30 × 3 = 90 minutes.",
    )
    assert april.untraced == []
    fast = ProblemFacts(
        "Ivo walks 20 km to the lake in half an hour. What is his speed?",
        "20 ÷ 0.5 = 40 km/h.",
    )
    assert d.plausible(fast)
    lap = ProblemFacts("A lap takes 1 hour 15 minutes. What is the speed over 10 km?", "10 ÷ 1.25 = 8 km/h.")
    assert lap.untraced == []


def test_a_duration_written_with_a_hyphen_is_a_duration() -> None:
    question = "Six friends watch a 3-hour play together. How long would 12 friends take to watch it?"
    assert d.proportional(ProblemFacts(question, "12 is twice 6, so 2 × 3 = 6 hours."))


def test_a_square_twice_as_wide_has_four_times_the_area() -> None:
    question = "A square of side 4 cm has an area of 16 cm². What is the area of a square of side 8 cm?"
    assert d.proportional(ProblemFacts(question, "The side doubles, so 2 × 16 = 32 cm²."))
    assert not d.proportional(ProblemFacts(question, "8 × 8 = 64 cm²."))


def test_a_premise_a_person_is_said_to_do_is_invented_when_never_given() -> None:
    question = "Ola earns £8 an hour. How much does she earn this week?"
    assert d.invented(ProblemFacts(question, "She works 12 hours, so 12 × 8 = £96."))


def test_a_number_is_not_a_constant_taken_apart() -> None:
    """40 is not 100 − 60 because a 60 is written somewhere: only a given or computed quantity may be
    split (75 minutes as 1 hour and 15 minutes, 35 % as 30 % + 5 %)."""
    stranger = ProblemFacts(
        "A tank fills in 3 hours with one pump. How long with 3 pumps?",
        "With half as many musicians it takes twice as long: 40 × 120 / 60 = 80 minutes.",
    )
    assert Fraction(40) in stranger.untraced and d.invented(stranger)
    split = ProblemFacts(
        "The walk up takes 35 minutes and the walk back 40 minutes. How long do they walk altogether?",
        "35 + 40 = 75 minutes, which is 1 hour and 15 minutes.",
    )
    assert split.untraced == []


# ---- whose quantity it is ------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("question", "flawed", "sound"),
    [
        (  # a neighbour's plants
            "Ines grows 14 pea plants. Her neighbour, Mr Adeyemi, grows 20 pea plants. Each of Ines's "
            "plants gives 30 pods. How many pods does Ines pick?",
            "14 + 20 = 34 plants, and 34 × 30 = 1020 pods.",
            "14 × 30 = 420 pods.",
        ),
        (  # a friend who pays for herself
            "Bruno buys 2 sandwiches at $4.50 each. His friend Carla buys a salad for $6 and pays for it "
            "herself. How much change does Bruno get from $20?",
            "2 × 4.50 = 9, 9 + 6 = 15, and 20 − 15 = $5.",
            "2 × 4.50 = 9, and 20 − 9 = $11.",
        ),
        (  # a brother who saves on his own ("who" stands for the brother)
            "Mila saves $7 a week. She has a brother, who saves $2 a week of his own. How many weeks does "
            "Mila need to save $42?",
            "7 + 2 = 9 a week, and 42 ÷ 9 = 4.67 weeks.",
            "42 ÷ 7 = 6 weeks.",
        ),
    ],
)
def test_a_number_of_someone_the_question_leaves_out_is_not_used(
    question: str, flawed: str, sound: str
) -> None:
    assert "belongs to" in (d.relevant_data(ProblemFacts(question, flawed)) or "")
    assert not d.relevant_data(ProblemFacts(question, sound))


def test_a_question_about_one_substance_does_not_add_another() -> None:
    question = "A loaf needs 500 g of flour and 10 g of salt. How much flour do 4 loaves need?"
    assert "salt" in (d.relevant_data(ProblemFacts(question, "4 × (500 + 10) = 2040 g.")) or "")
    assert not d.relevant_data(ProblemFacts(question, "4 × 500 = 2000 g."))
    mixed = "A loaf needs 500 g of flour and 10 g of salt. How much flour and salt do 4 loaves need together?"
    assert not d.relevant_data(ProblemFacts(mixed, "4 × (500 + 10) = 2040 g."))


# ---- phrasings of a contradiction, a wrong operation, a neighbouring answer ---------------------


def test_a_share_of_those_who_did_not_is_read_from_the_story() -> None:
    question = "Of 40 bulbs, 12 did not flower. What percentage did not flower?"
    assert not d.answers_the_question(ProblemFacts(question, "12 ÷ 40 = 30%."))


def test_work_done_one_after_another_adds_up() -> None:
    """Number words arrive as digits ("1 after another"): the in-turn words must still be read."""
    question = "Every wash lasts 40 minutes whatever the load. Ana runs 3 washes one after another. How long?"
    assert not d.proportional(ProblemFacts(question, "3 × 40 = 120 minutes."))


def test_what_is_given_to_the_asked_person_adds_to_what_they_have() -> None:
    question = "Hugo and his friend Ali each have 15 cards. Ali gives Hugo 4 cards. How many has Hugo now?"
    assert not d.operation_fits(ProblemFacts(question, "15 + 4 = 19 cards."))
    taken = "Hugo has 15 cards. He gives Ali 4 cards. How many cards does Hugo have now?"
    assert d.operation_fits(ProblemFacts(taken, "15 + 4 = 19 cards."))


def test_a_lifespan_compared_with_another_is_scaled() -> None:
    question = (
        "A hamster lives about 2 years. A tortoise lives 40 times as long. How long does a tortoise live?"
    )
    assert not d.proportional(ProblemFacts(question, "40 × 2 = 80 years."))


def test_a_price_the_question_never_gives_is_invented_even_when_small() -> None:
    question = "Tia buys 5 rulers for school. How much does she spend?"
    assert d.invented(ProblemFacts(question, "A ruler costs $2, so 5 × $2 = $10."))
    # a small amount worked out one step from the story's numbers is no invention
    change = "Mugs cost €13 each. Ben has €40. How many mugs can he buy?"
    assert not d.invented(ProblemFacts(change, "3 × 13 = 39, so 3 mugs, with €1 left."))


def test_money_says_its_unit_with_a_sign() -> None:
    question = "Pencils cost 45 cents each. Eve buys 4 pencils. How much does she pay, in dollars?"
    assert not d.answers_the_question(ProblemFacts(question, "4 × 45 = 180 cents, which is $1.80."))


def test_no_share_of_a_group_is_more_than_the_group() -> None:
    question = (
        "A club has 20 members. 26 members of the club came to the party. What percentage of the club came?"
    )
    assert d.plausible(ProblemFacts(question, "26 ÷ 20 = 1.3, which is 130%."))
    fine = "A club has 20 members. 15 of them came to the party. What percentage of the club came?"
    assert not d.plausible(ProblemFacts(fine, "15 ÷ 20 = 0.75, which is 75%."))


def test_one_to_a_seat_is_no_container_size() -> None:
    question = "2 buses have 40 seats each. 61 pupils travel, one person to a seat. How many seats are empty?"
    assert not d.operation_fits(ProblemFacts(question, "2 × 40 = 80, and 80 − 61 = 19 seats."))


def test_a_part_of_listed_values_is_not_added_to_them_again() -> None:
    question = (
        "A shop sold 40, 35, 52 and 33 cakes on four days. 20 of those cakes were lemon. What was the mean "
        "number of cakes sold a day?"
    )
    assert d.relevant_data(ProblemFacts(question, "40 + 35 + 52 + 33 + 20 = 180, and 180 ÷ 4 = 45 cakes."))
    assert not d.relevant_data(ProblemFacts(question, "40 + 35 + 52 + 33 = 160, and 160 ÷ 4 = 40 cakes."))


def test_what_the_story_says_is_left_is_counted_up() -> None:
    question = "A tray had 3 rows of 5 buns left. How many buns are left?"
    assert not d.answers_the_question(ProblemFacts(question, "3 × 5 = 15 buns."))


def test_a_fraction_of_an_amount_multiplies() -> None:
    question = "A loaf needs 2/3 of a cup of milk. Sam bakes 3/4 of a loaf. How much milk does he need?"
    assert d.operation_fits(ProblemFacts(question, "2/3 ÷ 3/4 = 8/9 of a cup."))
    assert not d.operation_fits(ProblemFacts(question, "3/4 × 2/3 = 1/2 a cup."))
    servings = "Ola has 6 cups of flour. Each cake needs 3/4 of a cup. How many cakes can she make?"
    assert not d.operation_fits(ProblemFacts(servings, "6 ÷ 3/4 = 8 cakes."))


def test_a_share_of_what_the_story_already_says_is_left() -> None:
    question = "Zoe has 8 slices left. Her dad eats half of the slices that are left. How many does he eat?"
    assert not d.percent_base(ProblemFacts(question, "Half of 8 is 4 slices."))


def test_groups_of_a_size_make_the_total_said_with_them() -> None:
    question = "A box has 5 rows of 6 eggs, 32 eggs in all. 7 break. How many are left?"
    assert d.data_consistent(ProblemFacts(question, "32 − 7 = 25 eggs."))
    fine = "A box has 5 rows of 6 eggs, 30 eggs in all. 7 break. How many are left?"
    assert not d.data_consistent(ProblemFacts(fine, "30 − 7 = 23 eggs."))


def test_a_task_may_open_with_how_to_work() -> None:
    """'Using π ≈ 3.14, find …' sets a task; a rate asked per second needs no journey time; a count of
    boxes needs no box's measure."""
    tin = "A tin has a radius of 4 cm and a height of 10 cm. Using π ≈ 3.14, find the volume of the tin."
    assert not d.one_task(ProblemFacts(tin, "3.14 × 4² × 10 = 502.4 cm³."))
    car = "A car travels at a steady 72 km/h. How many metres does it travel each second?"
    assert not d.invented(ProblemFacts(car, "72 km = 72000 m and 1 hour = 3600 s, so 72000 ÷ 3600 = 20 m."))
    eggs = "She packs 84 eggs into egg boxes that hold 12 eggs each. How many boxes does she fill?"
    assert not d.invented(ProblemFacts(eggs, "84 ÷ 12 = 7 boxes."))


def test_one_whole_said_with_two_sizes() -> None:
    question = "Sam's shop has 40 bikes: 25 are red and the rest blue. The blue ones are 1/3 of his 45 bikes."
    assert d.data_consistent(ProblemFacts(question, "The answer follows."))
    sold = "Sam's shop had 40 bikes and sold 5. He now counts his 35 bikes."
    assert not d.data_consistent(ProblemFacts(sold, "The answer follows."))


def test_a_later_fraction_of_the_money_she_had_left() -> None:
    question = (
        "Nia had £80. She spent 1/4 of it on shoes and then 1/2 of the money she had left on a coat. What "
        "did the coat cost?"
    )
    assert d.percent_base(ProblemFacts(question, "Shoes: 1/4 of 80 = £20. Coat: 1/2 of 80 = £40."))
    assert not d.percent_base(
        ProblemFacts(question, "Shoes: 1/4 of 80 = £20, 80 − 20 = 60. Coat: 1/2 of 60 = £30.")
    )


def test_the_same_route_takes_as_long_whoever_rides() -> None:
    question = (
        "A minibus took 1 hour 30 minutes to the zoo with 8 children on board. Today it takes the same route "
        "with 16 children. How long does the trip take today?"
    )
    assert d.proportional(ProblemFacts(question, "16 ÷ 8 = 2, so 1 h 30 min × 2 = 3 hours."))
    assert not d.proportional(ProblemFacts(question, "The same route takes the same 1 hour 30 minutes."))
    farther = "A car drives 60 km in 1 hour. At the same speed, how long does 150 km take?"
    assert not d.proportional(ProblemFacts(farther, "150 ÷ 60 = 2.5 hours."))


def test_a_title_and_a_surname_are_one_person() -> None:
    question = (
        "Mr Okafor grows 25 bean plants. His neighbour Maya grows 18 bean plants. Each of Mr Okafor's plants "
        "gives 3 handfuls of beans. How many handfuls does Mr Okafor pick?"
    )
    assert not d.relevant_data(ProblemFacts(question, "25 × 3 = 75 handfuls."))
    assert "belongs to Maya" in (
        d.relevant_data(ProblemFacts(question, "25 + 18 = 43, and 43 × 3 = 129.")) or ""
    )
