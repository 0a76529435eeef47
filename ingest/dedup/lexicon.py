"""Word lists the name normalizers consult: titles, nicknames, organization forms, place aliases.

Every table is generic (common English given names, common legal forms, well-known city and
country aliases); nothing here is tuned to one data set. Keys and values are accent-folded and
lower-case, as `names.fold` produces them.
"""

from __future__ import annotations

PERSON_TITLES: frozenset[str] = frozenset(
    {"dr", "mr", "mrs", "ms", "miss", "mx", "prof", "professor", "sir", "dame", "madam", "rev", "fr"}
)
PERSON_SUFFIXES: frozenset[str] = frozenset({"jr", "sr", "ii", "iii", "iv", "phd", "md", "esq", "dds"})

# nickname -> the formal names it can stand for. A formal name is compatible with itself and
# with every nickname listing it; "steve" stands for both Steven and Stephen.
_NICKNAMES: dict[str, tuple[str, ...]] = {
    "al": ("albert", "alan", "alfred", "alexander"),
    "alex": ("alexander", "alexandra"), "sandy": ("alexandra", "sandra"),
    "andy": ("andrew",), "drew": ("andrew",), "tony": ("anthony",),
    "ben": ("benjamin",), "benji": ("benjamin",), "benny": ("benjamin",),
    "brad": ("bradley",), "chuck": ("charles",), "charlie": ("charles",),
    "chris": ("christopher", "christine", "christina"), "topher": ("christopher",),
    "dan": ("daniel",), "danny": ("daniel",), "dave": ("david",), "davy": ("david",),
    "don": ("donald",), "donnie": ("donald",), "doug": ("douglas",),
    "ed": ("edward", "edwin"), "eddie": ("edward",), "ted": ("edward", "theodore"), "teddy": ("edward", "theodore"),
    "fred": ("frederick",), "freddie": ("frederick",), "frank": ("francis", "franklin"),
    "gene": ("eugene",), "gerry": ("gerald",), "jerry": ("gerald", "jerome", "jeremiah"),
    "greg": ("gregory",), "hank": ("henry",), "harry": ("henry", "harold"),
    "jim": ("james",), "jimmy": ("james",), "jamie": ("james",),
    "jake": ("jacob",), "jeff": ("jeffrey",), "geoff": ("geoffrey",),
    "jon": ("jonathan",), "johnny": ("john",), "joe": ("joseph",), "joey": ("joseph",),
    "josh": ("joshua",), "ken": ("kenneth",), "kenny": ("kenneth",),
    "larry": ("lawrence",), "len": ("leonard",), "lenny": ("leonard",),
    "matt": ("matthew",), "mike": ("michael",), "mikey": ("michael",), "mick": ("michael",),
    "nate": ("nathan", "nathaniel"), "nick": ("nicholas",), "nicky": ("nicholas",),
    "pat": ("patrick", "patricia"), "patty": ("patricia",), "pete": ("peter",),
    "phil": ("philip", "phillip"), "ray": ("raymond",),
    "rich": ("richard",), "richie": ("richard",), "rick": ("richard",), "ricky": ("richard",), "dick": ("richard",),
    "rob": ("robert",), "robbie": ("robert",), "bob": ("robert",), "bobby": ("robert",), "bert": ("robert", "albert"),
    "ron": ("ronald",), "ronnie": ("ronald",), "russ": ("russell",),
    "sam": ("samuel", "samantha"), "sammy": ("samuel",), "stan": ("stanley",),
    "steve": ("steven", "stephen"), "stevie": ("steven", "stephen"),
    "tim": ("timothy",), "timmy": ("timothy",), "tom": ("thomas",), "tommy": ("thomas",),
    "vince": ("vincent",), "walt": ("walter",),
    "will": ("william",), "willy": ("william",), "bill": ("william",), "billy": ("william",), "liam": ("william",),
    "zach": ("zachary",), "zack": ("zachary",),
    "abby": ("abigail",), "becky": ("rebecca",), "beth": ("elizabeth",), "liz": ("elizabeth",),
    "lizzie": ("elizabeth",), "betty": ("elizabeth",), "cathy": ("catherine",), "kate": ("katherine", "catherine"),
    "katie": ("katherine", "catherine"), "kathy": ("katherine", "kathleen"), "jen": ("jennifer",),
    "jenny": ("jennifer",), "jess": ("jessica",), "jessie": ("jessica",), "maggie": ("margaret",),
    "meg": ("margaret",), "peggy": ("margaret",), "mandy": ("amanda",), "sue": ("susan",),
    "susie": ("susan",), "vicky": ("victoria",), "val": ("valerie",), "debbie": ("deborah",),
    "deb": ("deborah",), "pam": ("pamela",), "barb": ("barbara",), "ginny": ("virginia",),
}


# Frequent given names (US census style). Two different names from this list are two people,
# not a typo: "Jose Ward" is not "Joe Ward" although one letter apart.
COMMON_GIVEN_NAMES: frozenset[str] = frozenset(
    """aaron adam adrian alan albert alex alexander alfred alice alicia allen amanda amber amy andrea
    andrew angela ann anna anne anthony antonio arthur ashley austin barbara benjamin beth betty beverly
    bill billy bob bobby bradley brandon brenda brian bruce bryan carl carlos carol caroline catherine
    charles cheryl chris christian christina christine christopher cindy connor craig crystal cynthia
    dale dan daniel danielle danny david dean deborah debra denise dennis derek diana diane dick don
    donald donna doris dorothy douglas dylan earl ed eddie edward elizabeth ellen emily emma eric erik
    ethan eugene evan evelyn frances francis frank fred gabriel gary gene george gerald gina gloria grace
    greg gregory hannah harold harry heather helen henry howard ian isaac jack jacob jacqueline jake
    james jamie jane janet janice jared jason jean jeff jeffrey jennifer jeremy jerry jesse jessica jim
    jimmy joan joe joel joey john johnny jon jonathan jordan jose joseph josh joshua joyce juan judith
    judy julia julie justin karen katherine kathleen kathryn kathy keith kelly ken kenneth kevin kim
    kimberly kyle larry laura lauren lawrence linda lisa logan lori louis luis madison margaret maria
    marie marilyn mark martha martin mary matt matthew megan melissa michael michelle mike nancy natalie
    nathan nicholas nick nicole noah olivia pamela patricia patrick paul peter philip phillip rachel
    ralph randy ray raymond rebecca richard rick rob robert roger ron ronald rose roy russell ruth ryan
    sam samantha samuel sandra sara sarah scott sean sharon shirley stephanie stephen steve steven susan
    teresa terry theresa thomas tim timothy tom tommy tony travis tyler victoria vincent virginia walter
    wayne william willie zachary""".split()
)


def distinct_given_names(a: str, b: str) -> bool:
    """Both are known given names, and not forms of one another."""
    return a != b and a in COMMON_GIVEN_NAMES and b in COMMON_GIVEN_NAMES and not (given_name_forms(a) & given_name_forms(b))


def given_name_forms(first: str) -> frozenset[str]:
    """The formal names a given name can stand for, itself included."""
    return frozenset((first, *_NICKNAMES.get(first, ())))


# Legal forms say nothing about which company is meant: "Oscorp Inc." is "Oscorp".
ORG_LEGAL_FORMS: frozenset[str] = frozenset(
    {
        "inc", "incorporated", "ltd", "limited", "corp", "corporation", "co", "company", "llc", "llp",
        "lp", "plc", "gmbh", "ag", "sa", "sas", "sarl", "srl", "spa", "bv", "nv", "oy", "ab", "as",
        "pty", "kk", "kg",
    }
)
# Descriptors are often dropped in speech ("Acme" for "Acme Holdings").
ORG_DESCRIPTORS: frozenset[str] = frozenset(
    {
        "holdings", "holding", "industries", "industry", "systems", "technologies", "technology",
        "laboratories", "group", "international", "enterprises", "solutions", "partners",
        "ventures", "services", "global", "worldwide",
    }
)
ORG_ABBREVIATIONS: dict[str, str] = {
    "hldgs": "holdings", "hldg": "holding", "ind": "industries", "inds": "industries", "indus": "industries",
    "sys": "systems", "tech": "technologies", "techs": "technologies", "labs": "laboratories",
    "lab": "laboratories", "grp": "group", "intl": "international", "svcs": "services",
    "ent": "enterprises", "incorporated": "inc", "limited": "ltd", "corporation": "corp", "company": "co",
}

PLACE_ABBREVIATIONS: dict[str, str] = {"st": "saint", "ste": "sainte", "ft": "fort", "mt": "mount", "pt": "port"}

# Canonical place name (folded) -> its folded aliases: endonyms, exonyms and common nicknames.
_PLACES: dict[str, tuple[str, ...]] = {
    "united states": ("usa", "us", "america", "united states of america"),
    "united kingdom": ("uk", "britain", "great britain"), "united arab emirates": ("uae",),
    "netherlands": ("holland",), "germany": ("deutschland",), "spain": ("espana",), "italy": ("italia",),
    "japan": ("nippon",), "new york city": ("nyc", "big apple", "new york"), "los angeles": ("la",),
    "san francisco": ("san fran", "frisco", "sf"), "philadelphia": ("philly",),
    "new orleans": ("nola", "big easy", "nawlins"), "las vegas": ("vegas",), "chicago": ("chi town", "chitown"),
    "washington": ("dc", "washington dc"), "cincinnati": ("cincy",), "oklahoma city": ("okc",),
    "sacramento": ("sac", "sactown"), "detroit": ("motown",), "boston": ("beantown",), "atlanta": ("atl",),
    "johannesburg": ("joburg", "jozi", "jhb"), "cape town": ("cpt",), "ho chi minh city": ("saigon", "hcmc"),
    "hong kong": ("hk",), "mumbai": ("bombay",), "kolkata": ("calcutta",), "chennai": ("madras",),
    "beijing": ("peking",), "guangzhou": ("canton",), "yangon": ("rangoon",), "istanbul": ("constantinople",),
    "munich": ("munchen",), "cologne": ("koln",), "nuremberg": ("nurnberg",), "vienna": ("wien",),
    "florence": ("firenze",), "milan": ("milano",), "turin": ("torino",), "rome": ("roma",),
    "naples": ("napoli",), "venice": ("venezia",), "genoa": ("genova",), "lisbon": ("lisboa",),
    "prague": ("praha",), "geneva": ("geneve", "genf"), "zurich": ("zurich",),
    "brussels": ("bruxelles", "brussel"), "antwerp": ("antwerpen",), "the hague": ("den haag", "s gravenhage"),
    "copenhagen": ("kobenhavn",), "moscow": ("moskva",), "warsaw": ("warszawa",), "cracow": ("krakow",),
    "athens": ("athina",), "seville": ("sevilla",), "cairo": ("al qahira",),
    "saint petersburg": ("st petersburg", "petersburg"), "mexico city": ("ciudad de mexico", "cdmx"),
    "rio de janeiro": ("rio",), "sao paulo": ("sao paulo",), "bangkok": ("bkk", "krung thep"),
}
PLACE_ALIASES: dict[str, str] = {alias: place for place, aliases in _PLACES.items() for alias in aliases}

ARTICLES: frozenset[str] = frozenset({"the", "a", "an"})
# Words that only say "this is an order": "order no. 51787" is the order "51787".
ORDER_WORDS: frozenset[str] = frozenset({"order", "orders", "no", "nr", "num", "number", "ord", "po", "purchase", "ref"})
