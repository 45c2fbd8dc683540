<?php

use Nordlicht\SiteDemo\Middleware\DealerMapCache;

return [
    'frontend' => [
        'nordlicht/site-demo/dealer-map-cache' => [
            'target' => DealerMapCache::class,
            'after' => [
                'typo3/cms-frontend/page-resolver',
            ],
            'before' => [
                'typo3/cms-frontend/prepare-tsfe-rendering',
            ],
        ],
    ],
];
