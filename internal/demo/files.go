package demo

import (
	"crypto/rand"
	"embed"
	"encoding/hex"
	"fmt"
	"io/fs"
	"net/url"
	"os"
	"path/filepath"
	"strings"

	"github.com/t3agent/t3agent/internal/typo3"
)

// skeleton is the static part of the installation folder; generated files
// (settings, logs) are added by writeProject.
//
//go:embed all:skeleton
var skeleton embed.FS

// writeProject writes the composer-mode installation folder to root.
func writeProject(root string, p InitParams, d typo3.Dialect, dsn string) error {
	err := fs.WalkDir(skeleton, "skeleton", func(path string, e fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel := strings.TrimPrefix(strings.TrimPrefix(path, "skeleton"), "/")
		target := filepath.Join(root, filepath.FromSlash(rel))
		if e.IsDir() {
			return os.MkdirAll(target, 0o755)
		}
		b, err := skeleton.ReadFile(path)
		if err != nil {
			return err
		}
		return os.WriteFile(target, b, 0o644)
	})
	if err != nil {
		return fmt.Errorf("write installation folder: %w", err)
	}
	// Composer links path repositories into vendor/.
	vendorLink := filepath.Join(root, "vendor", "nordlicht", "site-demo")
	if err := os.MkdirAll(filepath.Dir(vendorLink), 0o755); err != nil {
		return err
	}
	if err := os.Symlink(filepath.Join("..", "..", "packages", "site_demo"), vendorLink); err != nil {
		return fmt.Errorf("link site package into vendor: %w", err)
	}
	for _, dir := range []string{"public/fileadmin/user_upload/images", "public/fileadmin/user_upload/documents", "public/fileadmin/internal", "public/fileadmin/_processed_", "var/cache", "var/lock"} {
		if err := os.MkdirAll(filepath.Join(root, filepath.FromSlash(dir)), 0o755); err != nil {
			return err
		}
	}
	if err := writeFAL(root); err != nil {
		return err
	}
	settings, err := settingsPHP(d, dsn)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Join(root, "config", "system"), 0o755); err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(root, "config", "system", "settings.php"), []byte(settings), 0o640); err != nil {
		return err
	}
	return writeLogs(filepath.Join(root, "var", "log"), p)
}

// settingsPHP renders config/system/settings.php. A database password from
// the operator's DSN is never copied into the demo files.
func settingsPHP(d typo3.Dialect, dsn string) (string, error) {
	key := make([]byte, 48)
	if _, err := rand.Read(key); err != nil {
		return "", err
	}
	var conn string
	switch d {
	case typo3.DialectSQLite:
		path := strings.TrimPrefix(strings.TrimPrefix(dsn, "sqlite:"), "//")
		conn = fmt.Sprintf("                'driver' => 'pdo_sqlite',\n                'path' => %s,\n", phpString(path))
	default:
		u, err := url.Parse(dsn)
		if err != nil {
			return "", err
		}
		driver := "mysqli"
		if d == typo3.DialectPostgres {
			driver = "pdo_pgsql"
		}
		conn = fmt.Sprintf("                'dbname' => %s,\n                'driver' => '%s',\n                'host' => %s,\n                'password' => '',\n                'port' => %s,\n                'user' => %s,\n",
			phpString(strings.TrimPrefix(u.Path, "/")), driver, phpString(u.Hostname()), phpString(u.Port()), phpString(u.User.Username()))
		if d == typo3.DialectMySQL {
			conn += "                'charset' => 'utf8mb4',\n                'tableoptions' => [\n                    'charset' => 'utf8mb4',\n                    'collate' => 'utf8mb4_unicode_ci',\n                ],\n"
		}
	}
	return `<?php
return [
    'BE' => [
        'debug' => false,
        'installToolPassword' => '',
        'passwordHashing' => [
            'className' => 'TYPO3\\CMS\\Core\\Crypto\\PasswordHashing\\Argon2idPasswordHash',
            'options' => [],
        ],
    ],
    'DB' => [
        'Connections' => [
            'Default' => [
` + conn + `            ],
        ],
    ],
    'EXTENSIONS' => [
        'backend' => [
            'backendFavicon' => '',
            'backendLogo' => '',
            'loginBackgroundImage' => '',
            'loginFootnote' => '',
            'loginHighlightColor' => '#1c8c8c',
            'loginLogo' => 'EXT:site_demo/Resources/Public/Images/logo.svg',
            'loginLogoAlt' => 'Nordlicht Pumps',
        ],
    ],
    'FE' => [
        'debug' => false,
        'passwordHashing' => [
            'className' => 'TYPO3\\CMS\\Core\\Crypto\\PasswordHashing\\Argon2idPasswordHash',
            'options' => [],
        ],
    ],
    'LOG' => [
        'TYPO3' => [
            'CMS' => [
                'deprecations' => [
                    'writerConfiguration' => [
                        'notice' => [
                            'TYPO3\\CMS\\Core\\Log\\Writer\\FileWriter' => [
                                'disabled' => false,
                            ],
                        ],
                    ],
                ],
            ],
        ],
    ],
    'MAIL' => [
        'transport' => 'sendmail',
        'transport_sendmail_command' => '/usr/sbin/sendmail -t -i',
    ],
    'SYS' => [
        'devIPmask' => '',
        'displayErrors' => 0,
        'encryptionKey' => '` + hex.EncodeToString(key) + `',
        'exceptionalErrors' => 4096,
        'sitename' => 'Nordlicht Pumps',
        'systemMaintainers' => [
            1,
        ],
        'trustedHostsPattern' => '127\\.0\\.0\\.1(:\\d+)?|localhost(:\\d+)?|www\\.nordlicht-pumps\\.example',
    ],
];
`, nil
}

func phpString(s string) string {
	return "'" + strings.NewReplacer(`\`, `\\`, `'`, `\'`).Replace(s) + "'"
}
