<?php

declare(strict_types=1);

namespace Nordlicht\SiteDemo\ViewHelpers;

use TYPO3Fluid\Fluid\Core\ViewHelper\AbstractViewHelper;

/**
 * Renders the title of the current page for the header partial.
 *
 * Still reads $GLOBALS['TSFE'], which TYPO3 v13 deprecates; the
 * deprecation log names line 37.
 */
final class PageTitleViewHelper extends AbstractViewHelper
{
    public function initializeArguments(): void
    {
        $this->registerArgument('fallback', 'string', 'Title when the page has none', false, '');
    }

    /**
     * The navigation title wins over the title, as in the main menu.
     */
    public function render(): string
    {
        $fallback = (string)$this->arguments['fallback'];
        $request = $this->renderingContext->getAttribute(\Psr\Http\Message\ServerRequestInterface::class);
        $pageInformation = $request?->getAttribute('frontend.page.information');

        if ($pageInformation !== null) {
            $page = $pageInformation->getPageRecord();
            return (string)($page['nav_title'] ?: $page['title'] ?: $fallback);
        }

        // Old code path for requests without page information.
        $page = $GLOBALS['TSFE']->page ?? [];
        return (string)($page['nav_title'] ?? $page['title'] ?? $fallback);
    }
}
