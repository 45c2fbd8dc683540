package demo

import (
	"math/rand/v2"
	"strconv"
	"strings"
	"unicode"
)

// The demo company is "Nordlicht Pumps", a fictional maker of industrial and
// domestic pumps; the word pools below give the filler its voice.

// pools holds the word lists. They are built per generator run rather than
// kept in package variables, so nothing global can be changed by accident.
type pools struct {
	firstNames      []string
	lastNames       []string
	roles           []string
	productLines    []string
	productTopics   []string
	newsSubjects    []string
	newsVerbs       []string
	newsObjects     []string
	sentences       []string
	germanSentences []string
	contentHeaders  []string
	germanHeaders   []string
	bulletItems     []string
}

func newPools() *pools {
	return &pools{
		firstNames: []string{
			"Anna", "Ben", "Clara", "David", "Elena", "Felix", "Greta", "Hannes", "Ida", "Jonas",
			"Katharina", "Lukas", "Marie", "Niklas", "Olivia", "Paul", "Ronja", "Simon", "Tessa", "Valentin",
			"Wiebke", "Yusuf", "Zoe", "Mehmet", "Priya", "Tomasz", "Sofia", "Henrik", "Amira", "Jan",
		},

		lastNames: []string{
			"Becker", "Schmidt", "Hoffmann", "Nowak", "Jensen", "Wagner", "Petersen", "Krüger", "Yilmaz", "Lindqvist",
			"Meyer", "Brandt", "Kowalski", "Schulz", "Hansen", "Vogel", "Richter", "Albers", "Engel", "Lorenz",
		},

		roles: []string{
			"Head of Engineering", "Sales Manager Northern Europe", "Service Technician", "Product Owner",
			"Customer Support", "Controller", "Head of Marketing", "Apprentice Mechatronics", "Key Account Manager",
			"Quality Assurance", "Software Developer", "Logistics Coordinator",
		},

		productLines: []string{"Aqua", "Nordic", "Hydra", "Tide", "Fjord", "Delta", "Polar", "Brook"},

		productTopics: []string{
			"Technical data", "Installation guide", "Spare parts", "Accessories", "Maintenance plan",
			"Energy efficiency", "Certificates", "Application examples", "Dimensions and weights", "Warranty",
			"Control unit", "Retrofit kit", "Noise levels", "Pressure curves", "Materials",
		},

		newsSubjects: []string{
			"Nordlicht Pumps", "Our service team", "The Aqua series", "Our apprentices", "The Kiel plant",
			"The new control app", "Our sustainability report", "The Fjord line", "Customer service", "Our R&D lab",
		},

		newsVerbs: []string{
			"wins", "presents", "opens", "celebrates", "introduces", "expands", "completes", "launches",
		},

		newsObjects: []string{
			"the regional innovation award", "a new training centre", "ten years of partnership",
			"a carbon-neutral production line", "the spring trade fair programme", "an energy-saving upgrade",
			"a second warehouse in Hamburg", "remote diagnostics for all models", "a customer day in Kiel",
			"a refurbished test bench",
		},

		sentences: []string{
			"Our pumps move water reliably in homes, farms and factories across Northern Europe.",
			"Every unit is tested on our own bench before it leaves the plant in Kiel.",
			"The control unit adjusts the speed to the demand and saves up to 40 percent energy.",
			"Spare parts are available for at least fifteen years after the end of production.",
			"Our service technicians reach most customers within one working day.",
			"The housing is made of corrosion-resistant stainless steel and recyclable plastics.",
			"Installation takes less than two hours with the supplied mounting kit.",
			"Remote diagnostics let our support team see error codes before they arrive on site.",
			"We document every component so that maintenance stays simple for years.",
			"The quiet motor keeps noise levels below 35 dB in normal operation.",
			"Customers in agriculture use the Fjord line to irrigate fields of up to 50 hectares.",
			"Training sessions for installers take place every month at our training centre.",
			"All models carry the CE mark and meet the current ErP directive.",
			"Our apprentices build their first pump in the second year of their training.",
			"The app shows flow rate, pressure and energy consumption in real time.",
			"We ship to 24 countries and keep a stock of the most common parts in each region.",
			"A maintenance contract includes an annual inspection and priority support.",
			"The pressure curves in the data sheet help planners choose the right model.",
			"Our sustainability report lists the energy and water use of every plant.",
			"Please register your pump to extend the warranty to five years.",
		},

		germanSentences: []string{
			"Unsere Pumpen fördern Wasser zuverlässig in Haushalten, Betrieben und Fabriken.",
			"Jedes Gerät wird vor der Auslieferung auf unserem Prüfstand in Kiel getestet.",
			"Die Steuerung passt die Drehzahl an den Bedarf an und spart bis zu 40 Prozent Energie.",
			"Ersatzteile liefern wir mindestens fünfzehn Jahre nach Produktionsende.",
			"Unsere Servicetechniker sind in der Regel innerhalb eines Werktags vor Ort.",
			"Das Gehäuse besteht aus korrosionsbeständigem Edelstahl.",
			"Die Montage dauert mit dem mitgelieferten Set weniger als zwei Stunden.",
			"Bitte registrieren Sie Ihre Pumpe, um die Garantie auf fünf Jahre zu verlängern.",
		},

		contentHeaders: []string{
			"Why Nordlicht", "Built to last", "Service you can reach", "How it works", "Key facts",
			"Questions and answers", "Downloads", "What our customers say", "Technical overview", "Next steps",
			"Energy matters", "Made in Kiel", "Get in touch", "Our promise", "At a glance",
		},

		germanHeaders: []string{
			"Warum Nordlicht", "Gebaut für Jahrzehnte", "Service in Ihrer Nähe", "So funktioniert es",
			"Auf einen Blick", "Fragen und Antworten", "Downloads", "Nächste Schritte",
		},

		bulletItems: []string{
			"Stainless steel housing", "Energy class A+++", "Five year warranty", "Remote diagnostics",
			"Quiet operation below 35 dB", "Frost protection mode", "Replaceable cartridge seal",
			"Flow rate up to 12 m³/h", "App control via Bluetooth", "Spare parts for 15 years",
		},
	}
}

// pick returns a random element of s.
func pick[T any](r *rand.Rand, s []T) T { return s[r.IntN(len(s))] }

// paragraphs returns n HTML paragraphs of 2–4 sentences each.
func paragraphs(r *rand.Rand, n int, pool []string) string {
	var b strings.Builder
	for i := 0; i < n; i++ {
		if i > 0 {
			b.WriteByte('\n')
		}
		b.WriteString("<p>")
		k := 2 + r.IntN(3)
		for j := 0; j < k; j++ {
			if j > 0 {
				b.WriteByte(' ')
			}
			s := pick(r, pool)
			if j == 1 && r.IntN(4) == 0 {
				// Rich-text editors leave inline markup; so does the demo.
				s = "<strong>" + s + "</strong>"
			}
			b.WriteString(s)
		}
		b.WriteString("</p>")
	}
	return b.String()
}

// slugify turns a title into a TYPO3-style slug segment.
func slugify(s string) string {
	var b strings.Builder
	dash := false
	for _, r := range strings.ToLower(s) {
		switch r {
		case 'ä':
			b.WriteString("ae")
			dash = false
			continue
		case 'ö':
			b.WriteString("oe")
			dash = false
			continue
		case 'ü':
			b.WriteString("ue")
			dash = false
			continue
		case 'ß':
			b.WriteString("ss")
			dash = false
			continue
		}
		if r < 128 && (unicode.IsLetter(r) || unicode.IsDigit(r)) {
			b.WriteRune(r)
			dash = false
		} else if !dash && b.Len() > 0 {
			b.WriteByte('-')
			dash = true
		}
	}
	return strings.TrimSuffix(b.String(), "-")
}

// slugs hands out unique slugs, adding "-N" as TYPO3's SlugHelper does.
type slugs map[string]int

func (s slugs) unique(lang int, slug string) string {
	key := strconv.Itoa(lang) + slug
	n := s[key]
	s[key] = n + 1
	if n == 0 {
		return slug
	}
	return slug + "-" + strconv.Itoa(n)
}
