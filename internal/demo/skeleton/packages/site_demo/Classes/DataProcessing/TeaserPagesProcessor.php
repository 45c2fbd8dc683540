<?php

declare(strict_types=1);

namespace Nordlicht\SiteDemo\DataProcessing;

use TYPO3\CMS\Frontend\ContentObject\ContentObjectRenderer;
use TYPO3\CMS\Frontend\ContentObject\DataProcessorInterface;

/**
 * Collects the pages a "Page teaser" content element points to
 * (FlexForm field settings.pages) for its Fluid template.
 */
final class TeaserPagesProcessor implements DataProcessorInterface
{
    public function process(
        ContentObjectRenderer $cObj,
        array $contentObjectConfiguration,
        array $processorConfiguration,
        array $processedData
    ): array {
        $uids = $this->pageUids($processedData['flexFormData'] ?? []);
        $pages = $cObj->getRecords('pages', [
            'pidInList' => 'root',
            'uidInList' => implode(',', $uids),
            'orderBy' => 'sorting',
        ]);
        $processedData[$processorConfiguration['as'] ?? 'pages'] = $pages;

        return $processedData;
    }

    /**
     * @return list<int>
     */
    private function pageUids(array $flexForm): array
    {
        $uids = array_filter(array_map('intval', explode(',', (string)($flexForm['settings']['pages'] ?? ''))));
        if ($uids === []) {
            throw new \UnexpectedValueException(
                'The page teaser has no pages to show; check its "Pages to show" field.',
                1733212801
            );
        }
        return array_values($uids);
    }
}
