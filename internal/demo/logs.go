package demo

import (
	"encoding/hex"
	"fmt"
	"hash/fnv"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"time"
)

// LogFileHash is the 10-hex-digit suffix of the demo's log file names
// (TYPO3 derives it from the installation; the demo from its parameters).
func LogFileHash(p InitParams) string {
	h := fnv.New64a()
	fmt.Fprintf(h, "t3agent-demo-log/%d/%d", p.Now.Unix(), p.Seed)
	return fmt.Sprintf("%016x", h.Sum64())[:10]
}

// logLine renders one line as TYPO3's FileWriter does:
// date('r') [LEVEL] request="<id>" component="<dotted class>": message - {json data}
func logLine(t time.Time, level, request, component, message string, data map[string]any) string {
	s := t.UTC().Format("Mon, 02 Jan 2006 15:04:05 -0700") + " [" + level + `] request="` + request + `" component="` + component + `": ` + message
	if len(data) > 0 {
		s += " - " + jsonString(data)
	}
	return s + "\n"
}

const projectPath = "/var/www/html"

// stackTrace is PHP's Exception::getTraceAsString() for the frames given.
func stackTrace(frames ...string) string {
	var b strings.Builder
	for i, f := range frames {
		fmt.Fprintf(&b, "#%d %s\n", i, f)
	}
	fmt.Fprintf(&b, "#%d {main}", len(frames))
	return b.String()
}

// writeLogs writes var/log/typo3_<hash>.log and the deprecations log with
// a few days of realistic entries before p.Now; the newest exception is a
// content rendering failure with a stack trace.
func writeLogs(dir string, p InitParams) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	s1, s2 := seedFor(p)
	r := rand.New(rand.NewPCG(s1^0x6c6f67, s2))
	reqID := func() string {
		b := make([]byte, 7)
		for i := range b {
			b[i] = byte(r.UintN(256))
		}
		return hex.EncodeToString(b)[:13]
	}
	var main, depr strings.Builder
	day0 := p.Now.Add(-5 * 24 * time.Hour)
	at := func(day, hour, minute int) time.Time {
		return day0.Add(time.Duration(day)*24*time.Hour + time.Duration(hour)*time.Hour + time.Duration(minute)*time.Minute + time.Duration(r.IntN(60))*time.Second)
	}
	fluidTrace := stackTrace(
		projectPath+"/vendor/typo3fluid/fluid/src/View/TemplatePaths.php(318): TYPO3Fluid\\Fluid\\View\\TemplatePaths->resolveFileInPaths(Array, 'Html', 'html')",
		projectPath+"/vendor/typo3fluid/fluid/src/View/AbstractTemplateView.php(160): TYPO3Fluid\\Fluid\\View\\TemplatePaths->getTemplateSource('Default', 'Html')",
		projectPath+"/vendor/typo3/cms-frontend/Classes/ContentObject/FluidTemplateContentObject.php(92): TYPO3Fluid\\Fluid\\View\\AbstractTemplateView->render()",
		projectPath+"/vendor/typo3/cms-frontend/Classes/ContentObject/ContentObjectRenderer.php(791): TYPO3\\CMS\\Frontend\\ContentObject\\FluidTemplateContentObject->render(Array)",
		projectPath+"/vendor/typo3/cms-frontend/Classes/ContentObject/ContentObjectRenderer.php(734): TYPO3\\CMS\\Frontend\\ContentObject\\ContentObjectRenderer->render(Object(TYPO3\\CMS\\Frontend\\ContentObject\\FluidTemplateContentObject), Array)",
		projectPath+"/vendor/typo3/cms-frontend/Classes/ContentObject/RecordsContentObject.php(148): TYPO3\\CMS\\Frontend\\ContentObject\\ContentObjectRenderer->cObjGetSingle('< tt_content', Array, 'tt_content')",
		projectPath+"/vendor/typo3/cms-frontend/Classes/Http/RequestHandler.php(267): TYPO3\\CMS\\Frontend\\ContentObject\\ContentObjectRenderer->cObjGet(Array)",
		projectPath+"/vendor/typo3/cms-core/Classes/Middleware/ResponsePropagation.php(34): TYPO3\\CMS\\Frontend\\Http\\RequestHandler->handle(Object(TYPO3\\CMS\\Core\\Http\\ServerRequest))",
		projectPath+"/vendor/typo3/cms-core/Classes/Http/MiddlewareDispatcher.php(78): TYPO3\\CMS\\Core\\Middleware\\ResponsePropagation->process(Object(TYPO3\\CMS\\Core\\Http\\ServerRequest), Object(TYPO3\\CMS\\Core\\Http\\MiddlewareDispatcher))",
		projectPath+"/vendor/typo3/cms-frontend/Classes/Http/Application.php(75): TYPO3\\CMS\\Core\\Http\\MiddlewareDispatcher->handle(Object(TYPO3\\CMS\\Core\\Http\\ServerRequest))",
		projectPath+"/public/index.php(20): TYPO3\\CMS\\Frontend\\Http\\Application->run()",
	)
	dbTrace := stackTrace(
		projectPath+"/vendor/doctrine/dbal/src/Connection.php(1435): Doctrine\\DBAL\\Driver\\API\\SQLite\\ExceptionConverter->convert(Object(Doctrine\\DBAL\\Driver\\PDO\\Exception), Object(Doctrine\\DBAL\\Query))",
		projectPath+"/vendor/doctrine/dbal/src/Connection.php(802): Doctrine\\DBAL\\Connection->convertExceptionDuringQuery(Object(Doctrine\\DBAL\\Driver\\PDO\\Exception), 'SELECT `uid`, `...', Array, Array)",
		projectPath+"/vendor/typo3/cms-core/Classes/Database/Query/QueryBuilder.php(224): Doctrine\\DBAL\\Connection->executeQuery('SELECT `uid`, `...', Array, Array)",
		projectPath+"/vendor/typo3/cms-core/Classes/Database/Query/QueryBuilder.php(251): TYPO3\\CMS\\Core\\Database\\Query\\QueryBuilder->executeQuery()",
		projectPath+"/vendor/typo3/cms-backend/Classes/Controller/PageLayoutController.php(312): TYPO3\\CMS\\Core\\Database\\Query\\QueryBuilder->executeQuery()",
		projectPath+"/vendor/typo3/cms-backend/Classes/Http/RouteDispatcher.php(51): TYPO3\\CMS\\Backend\\Controller\\PageLayoutController->mainAction(Object(TYPO3\\CMS\\Core\\Http\\ServerRequest))",
		projectPath+"/vendor/typo3/cms-backend/Classes/Http/Application.php(84): TYPO3\\CMS\\Backend\\Http\\RouteDispatcher->dispatch(Object(TYPO3\\CMS\\Core\\Http\\ServerRequest))",
		projectPath+"/public/typo3/index.php(20): TYPO3\\CMS\\Backend\\Http\\Application->run()",
	)
	// The site package's own processor throws; its frames lead into
	// packages/site_demo (PHP reports the real path behind vendor/'s symlink).
	teaserTrace := stackTrace(
		projectPath+"/packages/site_demo/Classes/DataProcessing/TeaserPagesProcessor.php(22): Nordlicht\\SiteDemo\\DataProcessing\\TeaserPagesProcessor->pageUids(Array)",
		projectPath+"/vendor/typo3/cms-frontend/Classes/ContentObject/ContentDataProcessor.php(77): Nordlicht\\SiteDemo\\DataProcessing\\TeaserPagesProcessor->process(Object(TYPO3\\CMS\\Frontend\\ContentObject\\ContentObjectRenderer), Array, Array, Array)",
		projectPath+"/vendor/typo3/cms-frontend/Classes/ContentObject/FluidTemplateContentObject.php(83): TYPO3\\CMS\\Frontend\\ContentObject\\ContentDataProcessor->process(Object(TYPO3\\CMS\\Frontend\\ContentObject\\ContentObjectRenderer), Array, Array)",
		projectPath+"/vendor/typo3/cms-frontend/Classes/ContentObject/ContentObjectRenderer.php(791): TYPO3\\CMS\\Frontend\\ContentObject\\FluidTemplateContentObject->render(Array)",
		projectPath+"/vendor/typo3/cms-frontend/Classes/Http/RequestHandler.php(267): TYPO3\\CMS\\Frontend\\ContentObject\\ContentObjectRenderer->cObjGet(Array)",
		projectPath+"/public/index.php(20): TYPO3\\CMS\\Frontend\\Http\\Application->run()",
	)

	type entry struct {
		t                         time.Time
		level, component, message string
		data                      map[string]any
	}
	var entries []entry
	add := func(t time.Time, level, component, message string, data map[string]any) {
		entries = append(entries, entry{t, level, component, message, data})
	}
	ips := []string{"192.0.2.14", "192.0.2.77", "198.51.100.23"}
	for day := 0; day < 5; day++ {
		add(at(day, 7, 58), "INFO", "TYPO3.CMS.Scheduler.Scheduler", "Scheduler task run", map[string]any{"task": 1, "class": "TYPO3\\CMS\\Scheduler\\Task\\TableGarbageCollectionTask"})
		add(at(day, 8, r.IntN(50)), "INFO", "TYPO3.CMS.Core.Authentication.BackendUserAuthentication", "User editor logged in from "+pick(r, ips), nil)
		add(at(day, 9, r.IntN(59)), "WARNING", "TYPO3.CMS.Core.Resource.ResourceStorage", `File "/user_upload/images/pump-aqua-100.jpg" does not exist`, map[string]any{"storage": 1})
		add(at(day, 11, r.IntN(59)), "NOTICE", "TYPO3.CMS.Frontend.Controller.ErrorController", "The requested page does not exist!", map[string]any{"url": "http://127.0.0.1:8080/products/product-x", "pageArguments": "0"})
		if day%2 == 1 {
			add(at(day, 14, r.IntN(59)), "ERROR", "TYPO3.CMS.Core.Error.ErrorHandler",
				`Core: Error handler (FE): PHP Warning: Undefined array key "settings" in `+projectPath+`/var/cache/code/fluid_template/Default_action_Default_4c2a97b05e.php line 47`, nil)
		}
	}
	add(at(1, 16, 5), "CRITICAL", "TYPO3.CMS.Frontend.ContentObject.Exception.ProductionExceptionHandler",
		"Oops, an error occurred! Code: "+at(1, 16, 5).Format("20060102150405")+"e41b7c2a",
		map[string]any{"exception": "TYPO3Fluid\\Fluid\\View\\Exception\\InvalidTemplateResourceException: Tried resolving a template file for controller action \"Default->Html\" in format \".html\", but none of the paths contained the expected template file (Html.html). The following paths were checked: " +
			projectPath + "/vendor/nordlicht/site-demo/Resources/Private/Templates/ContentElements/ in " + projectPath + "/vendor/typo3fluid/fluid/src/View/TemplatePaths.php:592\nStack trace:\n" + fluidTrace})
	add(at(2, 10, 30), "ALERT", "TYPO3.CMS.Core.Error.DebugExceptionHandler",
		"Uncaught TYPO3 Exception: An exception occurred while executing a query: SQLSTATE[HY000]: General error: 5 database is locked",
		map[string]any{"exception": "Doctrine\\DBAL\\Exception\\LockWaitTimeoutException: An exception occurred while executing a query: SQLSTATE[HY000]: General error: 5 database is locked in " +
			projectPath + "/vendor/doctrine/dbal/src/Driver/API/SQLite/ExceptionConverter.php:35\nStack trace:\n" + dbTrace})
	add(at(4, 13, 12), "CRITICAL", "TYPO3.CMS.Frontend.ContentObject.Exception.ProductionExceptionHandler",
		"Oops, an error occurred! Code: "+at(4, 13, 12).Format("20060102150405")+"9d03f6b1",
		map[string]any{"exception": "UnexpectedValueException: The page teaser has no pages to show; check its \"Pages to show\" field. in " +
			projectPath + "/packages/site_demo/Classes/DataProcessing/TeaserPagesProcessor.php:40\nStack trace:\n" + teaserTrace})
	// A mail transport failure whose message carries the SMTP DSN with its
	// password, as Symfony Mailer writes it: the tools must mask it.
	add(at(3, 9, 41), "ERROR", "TYPO3.CMS.Core.Mail.Mailer",
		"Sending the dealer enquiry mail failed",
		map[string]any{"exception": "Symfony\\Component\\Mailer\\Exception\\TransportException: Connection could not be established with host \"smtp://mailer:" + p.mailPassword() + "@mail.nordlicht-pumps.example:587\": stream_socket_client(): Unable to connect in " +
			projectPath + "/vendor/symfony/mailer/Transport/Smtp/Stream/SocketStream.php:154\nStack trace:\n" + stackTrace(
			projectPath+"/vendor/symfony/mailer/Transport/Smtp/SmtpTransport.php(279): Symfony\\Component\\Mailer\\Transport\\Smtp\\Stream\\SocketStream->initialize()",
			projectPath+"/vendor/typo3/cms-core/Classes/Mail/Mailer.php(117): Symfony\\Component\\Mailer\\Transport\\AbstractTransport->send(Object(Symfony\\Component\\Mime\\Email), NULL)",
			projectPath+"/public/index.php(20): TYPO3\\CMS\\Frontend\\Http\\Application->run()",
		)})
	// Entries are written in time order, as a live log would have them.
	for i := 1; i < len(entries); i++ {
		for j := i; j > 0 && entries[j].t.Before(entries[j-1].t); j-- {
			entries[j], entries[j-1] = entries[j-1], entries[j]
		}
	}
	for _, e := range entries {
		main.WriteString(logLine(e.t, e.level, reqID(), e.component, e.message, e.data))
	}

	deprecations := []string{
		`Core: Error handler (FE): TYPO3 Deprecation Notice: Using "$GLOBALS['TSFE']" is deprecated and will stop working in TYPO3 v14. Use the request attribute "frontend.page.information" instead. in ` + projectPath + `/packages/site_demo/Classes/ViewHelpers/PageTitleViewHelper.php line 37`,
		`Core: Error handler (BE): TYPO3 Deprecation Notice: ExtensionManagementUtility::addPiFlexFormValue() with a CType other than "*" is deprecated. in ` + projectPath + `/vendor/typo3/cms-core/Classes/Utility/ExtensionManagementUtility.php line 1023`,
		`Core: Error handler (FE): TYPO3 Deprecation Notice: TypoScript condition "getTSFE()" is deprecated, use "request.getPageArguments()" or "frontend.page.information" instead. in ` + projectPath + `/vendor/typo3/cms-core/Classes/ExpressionLanguage/FunctionsProvider/Typo3ConditionFunctionsProvider.php line 121`,
		`Core: Error handler (BE): TYPO3 Deprecation Notice: Page TSconfig option "mod.web_layout.tt_content.preview" with a Fluid template is deprecated, register a PreviewRenderer instead. in ` + projectPath + `/vendor/typo3/cms-backend/Classes/Preview/StandardContentPreviewRenderer.php line 88`,
	}
	for day := 0; day < 5; day++ {
		for i, msg := range deprecations {
			if (day+i)%2 == 0 {
				depr.WriteString(logLine(at(day, 10+i, 0), "NOTICE", reqID(), "TYPO3.CMS.deprecations", msg, nil))
			}
		}
	}
	hash := LogFileHash(p)
	if err := os.WriteFile(filepath.Join(dir, "typo3_"+hash+".log"), []byte(main.String()), 0o644); err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(dir, "typo3_deprecations_"+hash+".log"), []byte(depr.String()), 0o644)
}
